"""The CI gate: bars on a run's metric means, flips against a baseline run, JUnit XML.

A *bar* is a value with a canonical text form (``recall_at_5 >= 0.8``), parsed from the
config's ``gate:`` mapping or from a command-line option. The gate passes when every bar
holds on the run's mean, at most ``allow_missing`` questions (default 0) have no result,
and, with a baseline run and ``fail_on_regression``, no question flips from pass to fail.

A question passes when none of the checks it recorded fails (found / grounded / right,
defined once in :mod:`ragassay.checks`); a check that is None does not fail; a bar whose
mean is None does.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .checks import CHECKS, Checks, question_checks
from .errors import InputError, unknown_name
from .jsonio import write_bytes
from .metrics.measures import canonical_name
from .runfolder import RunResult

Op = Literal[">=", ">", "<=", "<", "=="]
OPERATORS: tuple[Op, ...] = (">=", ">", "<=", "<", "==")
# Values this close to a threshold count as equal to it, so float noise in a mean
# (0.7999999999999999 for 0.8) never decides a bar.
REL_TOL = 1e-9
ABS_TOL = 1e-9

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_EXPR = re.compile(rf"^\s*(>=|<=|==|>|<)\s*({_NUMBER})\s*$")
_BAR_TEXT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_@.]*)\s*(.*)$", re.S)
# Characters XML 1.0 cannot hold at all; a stray control character in a question must not
# make the whole report unreadable to the CI system.
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


# --- bars -----------------------------------------------------------------------------


def _num_text(x: float) -> str:
    """Shortest text of a threshold: ``1`` for 1.0, ``0.8`` for 0.8."""
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class Bar:
    """One threshold on a metric mean: ``metric op threshold``."""

    metric: str
    op: Op
    threshold: float

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}; use one of {', '.join(OPERATORS)}")
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite number, got {self.threshold!r}")

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {_num_text(self.threshold)}"

    def holds(self, value: float) -> bool:
        """Whether ``value op threshold``, with values within the tolerance equal to it."""
        equal = math.isclose(value, self.threshold, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        if self.op == "==":
            return equal
        if self.op == ">=":
            return equal or value > self.threshold
        if self.op == "<=":
            return equal or value < self.threshold
        if self.op == ">":
            return not equal and value > self.threshold
        return not equal and value < self.threshold


def _unknown_metric(metric: str, known: list[str]) -> str:
    return unknown_name("metric", metric, known, known_as="the run measures")


def parse_bar(metric: str, expr: Any, *, source: str | Path = "gate",
              known_metrics: Iterable[str] | None = None) -> Bar:
    """Parse ``expr`` (``">= 0.8"``, ``"<0.1"``, ``"== 1"``) into a :class:`Bar` on ``metric``.

    The operator is required: a bare number is refused rather than guessed to mean ``>=``.
    With ``known_metrics``, a metric outside it is refused with the nearest valid names.
    Errors raise :class:`InputError` at ``source`` with field ``gate.<metric>``.
    """
    where = f"gate.{metric}"
    if not isinstance(metric, str) or not metric.strip():
        raise InputError(source, "a bar needs a metric name", field="gate")
    try:  # any accepted spelling (recall@5, recall.5) names the run's recall_at_5
        metric = canonical_name(metric)
    except ValueError:
        pass  # not a measure name: refused below with the names the run holds
    if isinstance(expr, bool) or not isinstance(expr, str):
        if isinstance(expr, (int, float)) and not isinstance(expr, bool):
            raise InputError(source, f"a bare number ({expr}) is not a bar: write an operator and "
                             f"a number, e.g. '>= {expr}' (quote it in YAML: "
                             f"{metric}: \">= {expr}\")", field=where)
        raise InputError(source, f"expected a text like '>= 0.8', got {type(expr).__name__}",
                         field=where)
    m = _EXPR.match(expr)
    if m is None:
        hint = ""
        if re.fullmatch(rf"\s*{_NUMBER}\s*", expr):
            hint = f" (a bare number is not a bar: write '>= {expr.strip()}')"
        raise InputError(source, f"cannot parse {expr!r}: expected an operator (>=, >, <=, <, ==) "
                         f"and a number{hint}", field=where)
    if known_metrics is not None:
        known = list(known_metrics)
        if metric not in known:
            raise InputError(source, _unknown_metric(metric, known), field=where)
    threshold = float(m.group(2))
    if not math.isfinite(threshold):  # "1e999" parses to inf
        raise InputError(source, f"threshold {m.group(2)!r} is not a finite number", field=where)
    op: Op = m.group(1)  # type: ignore[assignment]  # the regex admits only OPERATORS
    return Bar(metric, op, threshold)


def parse_bar_text(text: str, *, source: str | Path = "--bar",
                   known_metrics: Iterable[str] | None = None) -> Bar:
    """Parse a whole bar such as ``"recall_at_5>=0.8"`` (the form of a command-line option)."""
    m = _BAR_TEXT.match(text)
    if m is None:
        raise InputError(source, f"cannot parse {text!r}: expected '<metric> <operator> <number>', "
                         "e.g. 'recall_at_5 >= 0.8'", field="gate")
    return parse_bar(m.group(1), m.group(2), source=source, known_metrics=known_metrics)


def parse_gate(mapping: Mapping[str, Any], *, source: str | Path,
               known_metrics: Iterable[str]) -> list[Bar]:
    """Parse a ``gate:`` mapping ``{metric: expr}`` into bars, in the mapping's order."""
    if not isinstance(mapping, Mapping):
        raise InputError(source, "expected a mapping of metric: \"<op> <number>\", e.g. "
                         "recall_at_5: \">= 0.8\"", field="gate")
    known = list(known_metrics)
    return [parse_bar(str(metric), expr, source=source, known_metrics=known)
            for metric, expr in mapping.items()]


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
            raise InputError(where, _unknown_metric(bar.metric, list(means)),
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


def _count(n: int, one: str, many: str) -> str:
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
        parts = [f"{violated} of {_count(total, 'bar', 'bars')} violated"]
    else:
        parts = [f"{_count(total, 'bar', 'bars')} ok"]
    if result.not_measured:
        n = _count(len(result.not_measured), "question", "questions")
        parts.append(f"{n} not measured (allowed: {result.options.allow_missing})")
    if result.options.junit_questions == "strict":
        n = _count(len(result.failing_questions), "failing question", "failing questions")
        parts.append(f"{n} (strict)")
    if result.baseline_id is not None:
        regs = _count(len(result.regressions), "regression", "regressions")
        if result.regressions and not result.fail_on_regression:
            regs += " (not failing: fail_on_regression is off)"
        fixes = _count(len(result.fixes), "fix", "fixes")
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
            lines.append(f"note: {_count(len(ids), 'question', 'questions')} only in {where}: "
                         + ", ".join(ids))
    lines.append(_summary(result))
    return lines


# --- JUnit XML -----------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _suite(parent: ET.Element, name: str, cases: list[ET.Element],
           properties: dict[str, str] | None = None) -> dict[str, int]:
    counts = {
        "tests": len(cases),
        "failures": sum(c.find("failure") is not None for c in cases),
        "errors": 0,
        "skipped": sum(c.find("skipped") is not None for c in cases),
    }
    suite = ET.SubElement(parent, "testsuite", {"name": name,
                                                **{k: str(v) for k, v in counts.items()}})
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", {"name": key, "value": _xml_text(value)})
    suite.extend(cases)
    return counts


def _case(classname: str, name: str) -> ET.Element:
    return ET.Element("testcase", {"classname": _xml_text(classname), "name": _xml_text(name)})


def _outcome(case: ET.Element, tag: str, message: str, text: str = "",
             kind: str | None = None) -> None:
    attrs = {"message": _xml_text(message)}
    if kind is not None:
        attrs["type"] = kind
    el = ET.SubElement(case, tag, attrs)
    if text:
        el.text = _xml_text(text)


def _gate_cases(result: GateResult) -> list[ET.Element]:
    cases = []
    for r in result.bars:
        case = _case("gate", str(r.bar))
        if not r.passed:
            detail = "" if r.baseline_value is None else f"baseline {r.baseline_value!r}"
            _outcome(case, "failure", r.reason, detail, "threshold")
        cases.append(case)
    allowed = result.options.allow_missing
    case = _case("gate", f"every question measured (allowed missing: {allowed})")
    if len(result.not_measured) > allowed:
        n = _count(len(result.not_measured), "question", "questions")
        _outcome(case, "failure", f"{n} not measured: "
                 + ", ".join(result.not_measured), kind="not_measured")
    cases.append(case)
    if result.baseline_id is not None:
        case = _case("gate", f"no regressions vs baseline {result.baseline_id}")
        if result.regressions:
            listed = ", ".join(f"{f.question_id} ({', '.join(f.checks)})"
                               for f in result.regressions)
            n = _count(len(result.regressions), "question", "questions")
            message = f"{n} went pass→fail: {listed}"
            if result.fail_on_regression:
                _outcome(case, "failure", message, kind="regression")
            else:
                _outcome(case, "skipped", f"fail_on_regression is off; {message}")
        cases.append(case)
    return cases


def _question_cases(result: GateResult) -> list[ET.Element]:
    """One case per question. It fails only when it decides the gate: a pass→fail flip
    against the baseline (with ``fail_on_regression``), or any failing check with
    ``junit_questions: strict``. Every other question states its checks in ``system-out``."""
    flipped = {f.question_id: f for f in result.regressions} if result.fail_on_regression else {}
    strict = result.options.junit_questions == "strict"
    found = result.found
    cases = []
    for q in result.run.questions:
        case = _case(q.topic or "questions", f"{q.question_id}: {_short(q.question)}")
        checks = " ".join(f"{c}={_check_text(getattr(q.checks, c))}" for c in CHECKS)
        parts = []
        if q.checks.failed:
            parts.append(f"failed: {', '.join(q.checks.failed)}")
        reason = q.scores.get("groundedness_reason")
        if reason:
            parts.append(f"groundedness: {reason}")
        if q.failures:
            parts.append(f"failure types: {', '.join(q.failures)}")
        text = f"{q.question_id}: {q.question}\nchecks: {checks} (found = {found})"
        if not q.measured:
            _outcome(case, "skipped", f"not measured: {q.not_measured}")
        elif q.question_id in flipped:
            _outcome(case, "failure", f"regression ({', '.join(flipped[q.question_id].checks)} "
                     "pass→fail); " + "; ".join(parts), text, "regression")
        elif strict and q.checks.failed:
            _outcome(case, "failure", "; ".join(parts), text, "question")
        else:  # passed or failed without deciding the gate: its verdict for the reader
            ET.SubElement(case, "system-out").text = _xml_text(
                "; ".join([*parts, text]) if parts else text)
        cases.append(case)
    return cases


def _check_text(value: bool | None) -> str:
    return "not-measured" if value is None else ("pass" if value else "fail")


def render_junit(result: GateResult) -> bytes:
    """The JUnit XML document (UTF-8 bytes): suite ``ragassay.gate`` (one case per bar, one
    for measured questions, one for regressions when a baseline was given) and suite
    ``ragassay.questions`` (one case per question). A passing gate has zero failures. No
    timestamps or timings, so equal inputs give equal bytes."""
    root = ET.Element("testsuites", {"name": "ragassay"})
    props = {"run_id": result.run_id, "found": result.found}
    if result.baseline_id is not None:
        props["baseline_id"] = result.baseline_id
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for key, n in _suite(root, "ragassay.gate", _gate_cases(result), props).items():
        totals[key] += n
    for key, n in _suite(root, "ragassay.questions", _question_cases(result)).items():
        totals[key] += n
    for key, n in totals.items():
        root.set(key, str(n))
    tree = ET.ElementTree(root)
    ET.indent(tree, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(result: GateResult, path: Path) -> Path:
    """Write :func:`render_junit` to ``path`` atomically (a CI system never reads half)."""
    return write_bytes(path, render_junit(result))
