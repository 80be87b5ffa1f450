"""The CI gate: bars on a run's metric means, flips against a baseline run, JUnit XML.

A *bar* is a value with a canonical text form (``recall_at_5 >= 0.8``), parsed from the
config's ``gate:`` mapping or from a command-line option. The gate passes when every bar
holds on the run's mean and, with a baseline run and ``fail_on_regression``, no question
flips from pass to fail.

A question passes when none of its checks fails:

- answerable: ``found`` (``hit_at_k`` for the smallest k the run measured per question, or
  ``rank > 0`` when it measured none), ``grounded`` (``groundedness == 1``) and ``right``
  (``correct == 1``);
- unanswerable: ``right`` only (``correct == 1``, i.e. it was declined).

A check whose score is None (not measured) does not fail; a bar whose mean is None does.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .runfolder import GROUPS, read_metrics, read_rows
from .schema import InputError

Op = Literal[">=", ">", "<=", "<", "=="]
OPERATORS: tuple[Op, ...] = (">=", ">", "<=", "<", "==")
CHECKS = ("found", "grounded", "right")
# Metric groups of metrics.json that bars may name, searched in this order.
# Values this close to a threshold count as equal to it, so float noise in a mean
# (0.7999999999999999 for 0.8) never decides a bar.
REL_TOL = 1e-9
ABS_TOL = 1e-9

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_EXPR = re.compile(rf"^\s*(>=|<=|==|>|<)\s*({_NUMBER})\s*$")
_BAR_TEXT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(.*)$", re.S)
_HIT = re.compile(r"^hit_at_([1-9][0-9]*)$")
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
    close = difflib.get_close_matches(metric, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    measured = ", ".join(known) if known else "(none)"
    return f"unknown metric {metric!r}{hint} (the run measures: {measured})"


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


# --- reading a run folder ----------------------------------------------------------------


@dataclass(frozen=True)
class QuestionOutcome:
    """The three checks of one question; a check absent from ``checks`` does not apply."""

    question_id: str
    question: str
    answerable: bool
    topic: str | None
    checks: dict[str, bool | None]  # True pass, False fail, None not measured
    groundedness_reason: str = ""

    @property
    def failed_checks(self) -> tuple[str, ...]:
        return tuple(c for c in CHECKS if self.checks.get(c) is False)

    @property
    def passed(self) -> bool:
        return not self.failed_checks


@dataclass(frozen=True)
class RunData:
    """What the gate needs from a run folder."""

    run_dir: Path
    run_id: str
    means: dict[str, float | None]  # every metric of the retrieval then answer groups
    ns: dict[str, int]
    questions: list[QuestionOutcome]
    found_metric: str  # "hit_at_<k>" or "rank"


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def run_metric_names(run_dir: Path) -> list[str]:
    """The metric names a bar may name: the run's retrieval group, then its answer group."""
    data = read_metrics(run_dir)
    return _metric_names(data)


def _metric_names(data: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for group in GROUPS:
        names.extend(n for n in data[group] if n not in names)
    return names


def _dict_field(path: Path, line: int, row: dict[str, Any], name: str) -> dict[str, Any]:
    value = row.get(name)
    if not isinstance(value, dict):
        raise InputError(path, "expected an object", line=line, field=name)
    return value


def _is_one(path: Path, line: int, scores: dict[str, Any], name: str, where: str) -> bool | None:
    """``scores[name] == 1``, None when not measured; refuses a non-number."""
    value = scores.get(name)
    if value is None:
        return None
    if not (_real(value) or isinstance(value, bool)):
        raise InputError(path, f"expected a number or null, got {value!r}", line=line,
                         field=f"{where}.{name}")
    return bool(value == 1)


def pick_found_metric(metric_rows: Iterable[dict[str, Any]]) -> str:
    """``hit_at_<k>`` for the smallest k present in the per-question metrics, else ``rank``."""
    ks = {int(m.group(1)) for row in metric_rows for key in row
          if (m := _HIT.match(key)) is not None}
    return f"hit_at_{min(ks)}" if ks else "rank"


def _found(path: Path, line: int, metrics: dict[str, Any], found_metric: str) -> bool | None:
    """The ``found`` check; without the hit column, ``0 < rank <= k`` (hit policy ``any``)."""
    if found_metric != "rank" and found_metric in metrics:
        return _is_one(path, line, metrics, found_metric, "metrics")
    rank = metrics.get("rank")
    if rank is None:
        return None
    if not _real(rank):
        raise InputError(path, f"expected a number or null, got {rank!r}", line=line,
                         field="metrics.rank")
    if found_metric == "rank":
        return rank > 0
    k = int(found_metric.removeprefix("hit_at_"))
    return 0 < rank <= k


def load_run(run_dir: Path, *, found_metric: str | None = None) -> RunData:
    """Read a run folder for the gate.

    ``found_metric`` fixes the ``found`` check (pass the run's when reading its baseline,
    so both are judged alike); by default it is picked from this run's rows.
    Raises :class:`InputError` naming the file for a missing or malformed file.
    """
    run_dir = Path(run_dir)
    data = read_metrics(run_dir)
    means: dict[str, float | None] = {}
    ns: dict[str, int] = {}
    for group in GROUPS:
        for name, agg in data[group].items():
            if name not in means:
                means[name] = None if agg["mean"] is None else float(agg["mean"])
                n = agg.get("n")
                ns[name] = n if isinstance(n, int) and not isinstance(n, bool) else 0

    answers_path = run_dir / "answers.jsonl"
    retrieved_path = run_dir / "retrieved_chunks.jsonl"
    answers = read_rows(answers_path)
    retrieved = read_rows(retrieved_path)
    for qid in answers:
        if qid not in retrieved:
            raise InputError(retrieved_path, f"no row for question {qid!r} of answers.jsonl")
    for qid, (line, _) in retrieved.items():
        if qid not in answers:
            raise InputError(retrieved_path, f"question {qid!r} has no row in answers.jsonl",
                             line=line)
    metric_rows = {qid: _dict_field(retrieved_path, line, row, "metrics")
                   for qid, (line, row) in retrieved.items()}
    if found_metric is None:
        found_metric = pick_found_metric(metric_rows.values())

    questions = []
    for qid, (line, row) in answers.items():
        answerable = row.get("answerable")
        if not isinstance(answerable, bool):
            raise InputError(answers_path, "expected true or false", line=line,
                             field="answerable")
        scores = _dict_field(answers_path, line, row, "scores")
        right = _is_one(answers_path, line, scores, "correct", "scores")
        checks: dict[str, bool | None] = {"right": right}
        if answerable:
            r_line = retrieved[qid][0]
            checks = {
                "found": _found(retrieved_path, r_line, metric_rows[qid], found_metric),
                "grounded": _is_one(answers_path, line, scores, "groundedness", "scores"),
                "right": right,
            }
        topic = row.get("topic", retrieved[qid][1].get("topic"))
        questions.append(QuestionOutcome(
            question_id=qid,
            question=str(row.get("question", retrieved[qid][1].get("question", ""))),
            answerable=answerable,
            topic=topic if isinstance(topic, str) and topic else None,
            checks=checks,
            groundedness_reason=str(scores.get("groundedness_reason") or ""),
        ))
    run_id = data.get("run_id")
    return RunData(run_dir, run_id if isinstance(run_id, str) else run_dir.name, means, ns,
                   questions, found_metric)


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
    """The gate's verdict; ``passed`` = every bar holds and (with a baseline and
    ``fail_on_regression``) no question flipped pass→fail."""

    passed: bool
    bars: list[BarResult]
    regressions: list[Flip] = field(default_factory=list)
    fixes: list[Flip] = field(default_factory=list)
    only_in_run: list[str] = field(default_factory=list)
    only_in_baseline: list[str] = field(default_factory=list)
    run_id: str = ""
    baseline_id: str | None = None
    fail_on_regression: bool = True
    found_metric: str = "rank"
    questions: list[QuestionOutcome] = field(default_factory=list)


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


def _flips(run: RunData, base: RunData) -> tuple[list[Flip], list[Flip], list[str], list[str]]:
    before = {q.question_id: q for q in base.questions}
    run_ids = {q.question_id for q in run.questions}
    regressions, fixes, only_in_run = [], [], []
    for q in run.questions:  # the run's file order: deterministic and readable (q01, q02 ...)
        old = before.get(q.question_id)
        if old is None:
            only_in_run.append(q.question_id)
        elif old.passed and not q.passed:
            moved = tuple(c for c in q.failed_checks if c not in old.failed_checks)
            regressions.append(Flip(q.question_id, moved, q.question))
        elif q.passed and not old.passed:
            moved = tuple(c for c in old.failed_checks if c not in q.failed_checks)
            fixes.append(Flip(q.question_id, moved, q.question))
    only_in_base = [q.question_id for q in base.questions if q.question_id not in run_ids]
    return regressions, fixes, only_in_run, only_in_base


def evaluate_gate(run_dir: Path, bars: list[Bar], *, baseline_dir: Path | None = None,
                  fail_on_regression: bool = True, found_metric: str | None = None) -> GateResult:
    """Check ``bars`` on the run in ``run_dir``, and compare it question by question with
    the run in ``baseline_dir`` when given.

    ``found_metric`` (``hit_at_<k>`` or ``rank``) overrides the ``found`` check, which is
    by default ``hit_at_k`` for the smallest k in the run's rows; the baseline is judged
    with the same one. A bar on a metric the run does not hold is bad input
    (:class:`InputError`, with the nearest names); so is a gate with no bar and no
    baseline, which could only pass.
    """
    if found_metric is not None and found_metric != "rank" and not _HIT.match(found_metric):
        raise ValueError(f"found_metric must be 'hit_at_<k>' or 'rank', got {found_metric!r}")
    run = load_run(Path(run_dir), found_metric=found_metric)
    known = list(run.means)
    for bar in bars:
        if bar.metric not in run.means:
            raise InputError(Path(run_dir) / "metrics.json", _unknown_metric(bar.metric, known),
                             field=f"gate.{bar.metric}")
    if not bars and baseline_dir is None:
        raise InputError(run_dir, "nothing to check: give at least one bar (config `gate:` or "
                         "--bar) or a baseline run", field="gate")
    base = None if baseline_dir is None else load_run(Path(baseline_dir),
                                                       found_metric=run.found_metric)
    results = [check_bar(b, run.means[b.metric], run.ns.get(b.metric, 0),
                         None if base is None else base.means.get(b.metric)) for b in bars]
    regressions: list[Flip] = []
    fixes: list[Flip] = []
    only_run: list[str] = []
    only_base: list[str] = []
    if base is not None:
        regressions, fixes, only_run, only_base = _flips(run, base)
    passed = all(r.passed for r in results) and not (fail_on_regression and regressions)
    return GateResult(
        passed=passed, bars=results, regressions=regressions, fixes=fixes,
        only_in_run=only_run, only_in_baseline=only_base, run_id=run.run_id,
        baseline_id=None if base is None else base.run_id,
        fail_on_regression=fail_on_regression, found_metric=run.found_metric,
        questions=run.questions,
    )


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


def _failure_types(run_dir: Path) -> dict[str, list[str]]:
    path = Path(run_dir) / "failure_cases.jsonl"
    out: dict[str, list[str]] = {}
    for qid, (line, row) in read_rows(path).items():
        types = row.get("failure_types", [])
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise InputError(path, "expected a list of labels", line=line, field="failure_types")
        out[qid] = types
    return out


def _question_cases(result: GateResult, run_dir: Path) -> list[ET.Element]:
    types = _failure_types(run_dir)
    cases = []
    for q in result.questions:
        case = _case(q.topic or "questions", f"{q.question_id}: {_short(q.question)}")
        failed = q.failed_checks
        if failed:
            parts = [f"failed: {', '.join(failed)}"]
            if q.groundedness_reason:
                parts.append(f"groundedness: {q.groundedness_reason}")
            if types.get(q.question_id):
                parts.append(f"failure types: {', '.join(types[q.question_id])}")
            checks = " ".join(f"{c}={_check_text(v)}" for c, v in q.checks.items())
            text = (f"{q.question_id}: {q.question}\n"
                    f"checks: {checks} (found = {result.found_metric})")
            _outcome(case, "failure", "; ".join(parts), text, "question")
        elif all(v is None for v in q.checks.values()):
            _outcome(case, "skipped", f"not measured: {', '.join(q.checks)}")
        cases.append(case)
    return cases


def _check_text(value: bool | None) -> str:
    return "not-measured" if value is None else ("pass" if value else "fail")


def render_junit(result: GateResult, run_dir: Path) -> bytes:
    """The JUnit XML document (UTF-8 bytes): suite ``ragassay.gate`` (one case per bar, plus
    one for regressions when a baseline was given) and suite ``ragassay.questions`` (one case
    per question of the run). No timestamps or timings, so equal inputs give equal bytes."""
    root = ET.Element("testsuites", {"name": "ragassay"})
    props = {"run_id": result.run_id, "found": result.found_metric}
    if result.baseline_id is not None:
        props["baseline_id"] = result.baseline_id
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for key, n in _suite(root, "ragassay.gate", _gate_cases(result), props).items():
        totals[key] += n
    for key, n in _suite(root, "ragassay.questions", _question_cases(result, run_dir)).items():
        totals[key] += n
    for key, n in totals.items():
        root.set(key, str(n))
    tree = ET.ElementTree(root)
    ET.indent(tree, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(result: GateResult, run_dir: Path, path: Path) -> None:
    """Write :func:`render_junit` to ``path`` through a temporary file and ``os.replace``,
    so a CI system never reads a half-written report."""
    data = render_junit(result, run_dir)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
