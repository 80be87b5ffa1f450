"""The gate's verdict: options, bars checked on a run's means, baseline flips, text lines."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..checks import Checks, question_checks
from ..errors import InputError
from ..runfolder import RunResult
from .bars import Bar, parse_gate, unknown_metric

# --- options ----------------------------------------------------------------------------

JunitQuestions = Literal["flips", "strict"]
OPTIONS = ("allow_missing", "junit_questions")


@dataclass(frozen=True)
class GateConfig:
    """A config's ``gate:`` mapping: bars, plus the options ``allow_missing`` (how many
    questions may be without a result; default 0) and ``junit_questions`` (``flips``: a
    question fails only when it went pass→fail against the baseline; ``strict``: every
    failing question fails the gate)."""

    bars: list[Bar]
    allow_missing: int = 0
    junit_questions: JunitQuestions = "flips"


def parse_gate_config(mapping: Mapping[str, Any], *, source: str | Path,
                      known_metrics: Iterable[str]) -> GateConfig:
    """Split a ``gate:`` mapping into its options and its bars (in the mapping's order)."""
    if not isinstance(mapping, Mapping):
        raise InputError(source, "expected a mapping of metric: \"<op> <number>\", e.g. "
                         "recall_at_5: \">= 0.8\"", field="gate")
    allow = mapping.get("allow_missing", 0)
    if isinstance(allow, bool) or not isinstance(allow, int) or allow < 0:
        raise InputError(source, f"expected a whole number >= 0, got {allow!r}",
                         field="gate.allow_missing")
    junit = mapping.get("junit_questions", "flips")
    if junit not in ("flips", "strict"):
        raise InputError(source, f"expected flips or strict, got {junit!r}",
                         field="gate.junit_questions")
    bars = parse_gate({m: e for m, e in mapping.items() if m not in OPTIONS}, source=source,
                      known_metrics=known_metrics)
    return GateConfig(bars, allow, junit)


# --- evaluating ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BarResult:
    """One bar checked on the run's mean (and the baseline's mean, when given)."""

    bar: Bar
    value: float | None
    passed: bool
    reason: str
    baseline_value: float | None = None

    @property
    def delta(self) -> float | None:
        """``value - baseline_value``, None when either is missing."""
        if self.value is None or self.baseline_value is None:
            return None
        return self.value - self.baseline_value


@dataclass(frozen=True)
class Flip:
    """A question whose pass/fail changed from the baseline; ``checks`` are those that moved."""

    question_id: str
    checks: tuple[str, ...]
    question: str = ""


@dataclass
class GateResult:
    """The gate's verdict; ``passed`` = every bar holds, at most ``allow_missing`` questions
    are without a result, (with a baseline and ``fail_on_regression``) no question flipped
    pass→fail, and (with ``junit_questions: strict``) every question passes."""

    passed: bool
    bars: list[BarResult]
    run: RunResult
    regressions: list[Flip] = field(default_factory=list)
    fixes: list[Flip] = field(default_factory=list)
    only_in_run: list[str] = field(default_factory=list)
    only_in_baseline: list[str] = field(default_factory=list)
    not_measured: list[str] = field(default_factory=list)
    baseline_id: str | None = None
    fail_on_regression: bool = True
    options: GateConfig = field(default_factory=lambda: GateConfig([]))

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def failing_questions(self) -> list[str]:
        return [q.question_id for q in self.run.questions if q.measured and not q.checks.passed]

    @property
    def found(self) -> str:
        t = self.run.totals
        return f"hit_at_{t.k} (hit policy {t.hit_policy})"


def _value_text(value: float, bar: Bar) -> str:
    """Three decimals, or more when three would hide which side of the threshold it is on."""
    for text in (f"{value:.3f}", f"{value:.6g}", repr(value)):
        if bar.holds(float(text)) == bar.holds(value):
            return text
    return repr(value)


def check_bar(bar: Bar, value: float | None, n: int = 0,
              baseline_value: float | None = None) -> BarResult:
    """Check one bar; a mean of None (nothing measured) fails with reason ``not measured``."""
    if value is None:
        return BarResult(bar, None, False, f"not measured (n={n})", baseline_value)
    return BarResult(bar, value, bar.holds(value), f"got {_value_text(value, bar)}",
                     baseline_value)


def _baseline_checks(run: RunResult, base: RunResult, base_dir: Path | None
                     ) -> dict[str, Checks | None]:
    """The baseline's checks at the run's k and hit policy (the same definition, recomputed
    from the baseline's stored metrics when it was measured at another k); None for a
    question the baseline has no result for."""
    k, policy = run.totals.k, run.totals.hit_policy
    where = (base_dir or Path(base.run_id)) / "metrics.json"
    if base.totals.hit_policy != policy:
        raise InputError(where, f"the baseline counts found with hit policy "
                         f"{base.totals.hit_policy!r}, the run with {policy!r}: not comparable",
                         field="checks.hit_policy")
    if base.totals.k == k:
        return {q.question_id: q.checks if q.measured else None for q in base.questions}
    out: dict[str, Checks | None] = {}
    for q in base.questions:
        if q.measured and q.answerable and q.gold_chunk_ids and f"hit_at_{k}" not in q.retrieval:
            raise InputError(where, f"the baseline was judged at k={base.totals.k} and holds no "
                             f"hit_at_{k}; rerun it with --k {k}", field="checks.k")
        out[q.question_id] = question_checks(answerable=q.answerable, retrieval=q.retrieval,
                                             scores=q.scores, k=k) if q.measured else None
    return out


def _flips(run: RunResult, base: RunResult, before: dict[str, Checks | None]
           ) -> tuple[list[Flip], list[Flip], list[str], list[str]]:
    run_ids = {q.question_id for q in run.questions}
    regressions, fixes, only_in_run = [], [], []
    for q in run.questions:  # the run's order: deterministic and readable (q01, q02 ...)
        if q.question_id not in before:
            only_in_run.append(q.question_id)
            continue
        old = before[q.question_id]
        if old is None or not q.measured:
            # no result on one side (its checks are all None, which would read as a pass):
            # neither a regression nor a fix; the run's side is counted by allow_missing
            continue
        if old.passed and not q.checks.passed:
            moved = tuple(c for c in q.checks.failed if c not in old.failed)
            regressions.append(Flip(q.question_id, moved, q.question))
        elif q.checks.passed and not old.passed:
            moved = tuple(c for c in old.failed if c not in q.checks.failed)
            fixes.append(Flip(q.question_id, moved, q.question))
    only_in_base = [q.question_id for q in base.questions if q.question_id not in run_ids]
    return regressions, fixes, only_in_run, only_in_base


def evaluate_gate(run: RunResult, bars: list[Bar] | GateConfig, *,
                  baseline: RunResult | None = None, fail_on_regression: bool = True,
                  run_dir: Path | None = None, baseline_dir: Path | None = None) -> GateResult:
    """Check the bars (and options) on a run, and compare it question by question with a
    baseline run when given, by the checks each question recorded.

    A bar on a metric the run does not hold is bad input (:class:`InputError`, with the
    nearest names); so is a gate with no bar and no baseline, which could only pass.
    """
    options = bars if isinstance(bars, GateConfig) else GateConfig(list(bars))
    means = run.metrics.means()
    where = (run_dir or Path(run.run_id)) / "metrics.json"
    for bar in options.bars:
        if bar.metric not in means:
            raise InputError(where, unknown_metric(bar.metric, list(means)),
                             field=f"gate.{bar.metric}")
    if not options.bars and baseline is None and options.junit_questions != "strict":
        raise InputError(run_dir or run.run_id, "nothing to check: give at least one bar "
                         "(config `gate:` or --bar) or a baseline run", field="gate")
    base_means = baseline.metrics.means() if baseline is not None else {}
    results = [check_bar(b, means[b.metric].mean, means[b.metric].n,
                         base_means[b.metric].mean if b.metric in base_means else None)
               for b in options.bars]
    regressions: list[Flip] = []
    fixes: list[Flip] = []
    only_run: list[str] = []
    only_base: list[str] = []
    if baseline is not None:
        before = _baseline_checks(run, baseline, baseline_dir)
        regressions, fixes, only_run, only_base = _flips(run, baseline, before)
    not_measured = [q.question_id for q in run.questions if not q.measured]
    result = GateResult(
        passed=False, bars=results, run=run, regressions=regressions, fixes=fixes,
        only_in_run=only_run, only_in_baseline=only_base, not_measured=not_measured,
        baseline_id=None if baseline is None else baseline.run_id,
        fail_on_regression=fail_on_regression, options=options)
    result.passed = (all(r.passed for r in results)
                     and not (fail_on_regression and regressions)
                     and len(not_measured) <= options.allow_missing
                     and not (options.junit_questions == "strict" and result.failing_questions))
    return result


# --- text ------------------------------------------------------------------------------


def count_text(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _bar_line(r: BarResult) -> str:
    line = f"{'ok  ' if r.passed else 'FAIL'} {r.bar}: {r.reason}"
    if r.baseline_value is not None:
        delta = r.delta
        line += f" (baseline {r.baseline_value:.3f}"
        line += f", {delta:+.3f})" if delta is not None else ")"
    return line


def _summary(result: GateResult) -> str:
    violated = sum(not r.passed for r in result.bars)
    total = len(result.bars)
    if total == 0:
        parts = ["no bars"]
    elif violated:
        parts = [f"{violated} of {count_text(total, 'bar', 'bars')} violated"]
    else:
        parts = [f"{count_text(total, 'bar', 'bars')} ok"]
    if result.not_measured:
        n = count_text(len(result.not_measured), "question", "questions")
        parts.append(f"{n} not measured (allowed: {result.options.allow_missing})")
    if result.options.junit_questions == "strict":
        n = count_text(len(result.failing_questions), "failing question", "failing questions")
        parts.append(f"{n} (strict)")
    if result.baseline_id is not None:
        regs = count_text(len(result.regressions), "regression", "regressions")
        if result.regressions and not result.fail_on_regression:
            regs += " (not failing: fail_on_regression is off)"
        fixes = count_text(len(result.fixes), "fix", "fixes")
        parts.append(f"{regs}, {fixes} vs baseline {result.baseline_id}")
    verdict = "gate passed" if result.passed else "gate FAILED"
    return f"{verdict} for run {result.run_id}: " + "; ".join(parts)


def format_result(result: GateResult) -> list[str]:
    """Lines for the terminal: one per bar (``ok   ...`` / ``FAIL ...``), one per flip, one
    per one-sided question list, then a summary line (``gate passed`` / ``gate FAILED``)."""
    lines = [_bar_line(r) for r in result.bars]
    lines += [f"REGRESSION {f.question_id}: {', '.join(f.checks)} pass→fail"
              for f in result.regressions]
    lines += [f"fixed      {f.question_id}: {', '.join(f.checks)} fail→pass" for f in result.fixes]
    if result.not_measured:
        over = len(result.not_measured) > result.options.allow_missing
        lines.append(f"{'FAIL' if over else 'note'} not measured: "
                     + ", ".join(result.not_measured))
    if result.options.junit_questions == "strict" and result.failing_questions:
        lines.append(f"FAIL failing questions (strict): {', '.join(result.failing_questions)}")
    for ids, where in ((result.only_in_run, "this run"), (result.only_in_baseline, "the baseline")):
        if ids:
            lines.append(f"note: {count_text(len(ids), 'question', 'questions')} only in {where}: "
                         + ", ".join(ids))
    lines.append(_summary(result))
    return lines
