"""The gate's JUnit XML report: one suite for the bars, one for the questions."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ..atomic import write_bytes
from ..checks import CHECKS
from .verdict import GateResult, count_text

# Characters XML 1.0 cannot hold at all; a stray control character in a question must not
# make the whole report unreadable to the CI system.
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
        n = count_text(len(result.not_measured), "question", "questions")
        _outcome(case, "failure", f"{n} not measured: "
                 + ", ".join(result.not_measured), kind="not_measured")
    cases.append(case)
    if result.baseline_id is not None:
        case = _case("gate", f"no regressions vs baseline {result.baseline_id}")
        if result.regressions:
            listed = ", ".join(f"{f.question_id} ({', '.join(f.checks)})"
                               for f in result.regressions)
            n = count_text(len(result.regressions), "question", "questions")
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
