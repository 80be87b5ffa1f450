"""The CI gate: parsing bars, checking them on a run, flips against a baseline, JUnit XML.

Run folders are written by hand (`make_run`) so each expected value can be read off the
rows; one test at the end gates a real run of the shipped fixture.
"""

from __future__ import annotations

import json
import operator
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragassay.gate import (
    Bar,
    evaluate_gate,
    format_result,
    load_run,
    parse_bar,
    parse_bar_text,
    parse_gate,
    pick_found_metric,
    render_junit,
    run_metric_names,
    write_junit,
)
from ragassay.schema import InputError

ROOT = Path(__file__).resolve().parents[1]
KNOWN = ["recall_at_5", "recall_at_10", "hit_at_5", "groundedness", "correct"]


# --- a synthetic run folder ---------------------------------------------------------------


def q(qid: str, *, answerable: bool = True, hit: int | None = 1, grounded: int | None = 1,
      correct: int | None = 1, reason: str = "", topic: str | None = None,
      types: tuple[str, ...] = (), rank: int | None = None, text: str | None = None,
      metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """One question of a synthetic run; unanswerable questions get no retrieval scores."""
    if not answerable:
        hit = grounded = None
    if metrics is None:
        metrics = {"hit_at_5": hit, "hit_at_10": hit,
                   "rank": rank if rank is not None else (None if hit is None else 3 * hit)}
    return {"question_id": qid, "answerable": answerable, "question": text or f"question {qid}?",
            "topic": topic, "metrics": metrics,
            "scores": {"groundedness": grounded, "groundedness_reason": reason,
                       "correct": correct, "hallucination_flag": 0},
            "types": list(types)}


def agg(mean: float | None, n: int = 4) -> dict[str, Any]:
    n = 0 if mean is None else n
    return {"mean": mean, "n": n, "missing": 0, "ci_low": mean, "ci_high": mean}


def make_run(root: Path, run_id: str, questions: list[dict[str, Any]],
             retrieval: dict[str, float | None] | None = None,
             answer: dict[str, float | None] | None = None) -> Path:
    """Write metrics.json, retrieved_chunks.jsonl, answers.jsonl, failure_cases.jsonl."""
    run = root / run_id
    run.mkdir(parents=True)
    retrieval = {"recall_at_5": 0.8, "recall_at_10": 0.9, "hit_at_5": 0.75} if retrieval is None \
        else retrieval
    answer = {"groundedness": 1.0, "correct": 0.5} if answer is None else answer
    metrics = {"run_id": run_id,
               "retrieval": {k: agg(v) for k, v in retrieval.items()},
               "answer": {k: agg(v) for k, v in answer.items()},
               "counts": {"questions": len(questions)}, "failures": {"counts": {}}}
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")

    def jsonl(name: str, rows: list[dict[str, Any]]) -> None:
        (run / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                encoding="utf-8")

    base = [{"run_id": run_id, "question_id": x["question_id"], "question": x["question"]}
            for x in questions]
    jsonl("retrieved_chunks.jsonl", [{**b, "metrics": x["metrics"]}
                                     for b, x in zip(base, questions, strict=True)])
    jsonl("answers.jsonl", [{**b, "answerable": x["answerable"], "scores": x["scores"],
                             **({"topic": x["topic"]} if x["topic"] else {})}
                            for b, x in zip(base, questions, strict=True)])
    jsonl("failure_cases.jsonl", [{**b, "failure_types": x["types"]}
                                  for b, x in zip(base, questions, strict=True) if x["types"]])
    return run


def bars(**exprs: str) -> list[Bar]:
    return [parse_bar(m, e) for m, e in exprs.items()]


# --- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(("expr", "op", "threshold", "text"), [
    (">= 0.8", ">=", 0.8, "recall_at_5 >= 0.8"),
    ("> 0.5", ">", 0.5, "recall_at_5 > 0.5"),
    ("<= 0", "<=", 0.0, "recall_at_5 <= 0"),
    ("< 0.1", "<", 0.1, "recall_at_5 < 0.1"),
    ("== 1", "==", 1.0, "recall_at_5 == 1"),
    (">=0.8", ">=", 0.8, "recall_at_5 >= 0.8"),
    ("  >=   .5  ", ">=", 0.5, "recall_at_5 >= 0.5"),
    ("<1e-2", "<", 0.01, "recall_at_5 < 0.01"),
    ("== 1.", "==", 1.0, "recall_at_5 == 1"),
])
def test_parse_bar_each_operator_and_spacing(expr: str, op: str, threshold: float,
                                             text: str) -> None:
    bar = parse_bar("recall_at_5", expr)
    assert (bar.metric, bar.op, bar.threshold) == ("recall_at_5", op, threshold)
    assert str(bar) == text


@pytest.mark.parametrize(("expr", "says"), [
    (">= abc", "cannot parse '>= abc': expected an operator (>=, >, <=, <, ==) and a number"),
    ("0.8", "a bare number is not a bar: write '>= 0.8'"),
    (0.8, "a bare number (0.8) is not a bar"),
    (1, "e.g. '>= 1'"),
    ("=> 0.8", "cannot parse '=> 0.8'"),
    ("!= 1", "cannot parse '!= 1'"),
    (">= 0.8.1", "cannot parse"),
    (">= nan", "cannot parse"),
    (">=", "cannot parse"),
    ("", "cannot parse"),
    (">= 1e999", "not a finite number"),
    (None, "expected a text like '>= 0.8', got NoneType"),
    (True, "got bool"),
])
def test_parse_bar_refuses_with_field_and_source(expr: Any, says: str) -> None:
    with pytest.raises(InputError) as info:
        parse_bar("recall_at_5", expr, source="configs/eval/x.yaml")
    assert says in info.value.message
    assert info.value.field == "gate.recall_at_5"
    assert info.value.path == "configs/eval/x.yaml"


def test_parse_gate_keeps_mapping_order_and_checks_names() -> None:
    got = parse_gate({"correct": "== 1", "recall_at_5": ">= 0.8"}, source="c.yaml",
                     known_metrics=KNOWN)
    assert [str(b) for b in got] == ["correct == 1", "recall_at_5 >= 0.8"]


def test_unknown_metric_suggests_the_nearest_names() -> None:
    with pytest.raises(InputError) as info:
        parse_gate({"recal_at_5": ">= 0.8"}, source="c.yaml", known_metrics=KNOWN)
    assert info.value.field == "gate.recal_at_5"
    assert "unknown metric 'recal_at_5'; did you mean recall_at_5" in info.value.message
    assert "(the run measures: recall_at_5, recall_at_10, hit_at_5" in info.value.message
    with pytest.raises(InputError, match="unknown metric 'latency'.*the run measures"):
        parse_bar("latency", "< 5", known_metrics=KNOWN)


def test_parse_gate_refuses_a_non_mapping() -> None:
    with pytest.raises(InputError, match="expected a mapping"):
        parse_gate(["recall_at_5 >= 0.8"], source="c.yaml", known_metrics=KNOWN)  # type: ignore[arg-type]


def test_parse_bar_text_the_option_form() -> None:
    assert parse_bar_text("recall_at_5>=0.8") == Bar("recall_at_5", ">=", 0.8)
    assert parse_bar_text(" correct == 1 ") == Bar("correct", "==", 1.0)
    with pytest.raises(InputError, match="cannot parse ''"):
        parse_bar_text("recall_at_5")
    with pytest.raises(InputError, match="expected '<metric> <operator> <number>'"):
        parse_bar_text(">= 0.8")
    with pytest.raises(InputError, match="did you mean hit_at_5"):
        parse_bar_text("hit_at_3 >= 0.5", known_metrics=KNOWN)


def test_bar_refuses_a_bad_operator_or_threshold() -> None:
    with pytest.raises(ValueError, match="unknown operator"):
        Bar("x", "!=", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        Bar("x", ">=", float("nan"))


thresholds = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(st.sampled_from([">=", ">", "<=", "<", "=="]), thresholds)
def test_canonical_text_parses_back_to_the_same_bar(op: str, threshold: float) -> None:
    bar = Bar("mrr_at_5", op, threshold)  # type: ignore[arg-type]
    assert parse_bar_text(str(bar)) == bar


# --- a bar on a value ---------------------------------------------------------------------


@pytest.mark.parametrize(("op", "value", "holds"), [
    (">=", 0.8, True), (">=", 0.79, False), (">=", 0.81, True),
    (">", 0.8, False), (">", 0.81, True),
    ("<=", 0.8, True), ("<=", 0.81, False),
    ("<", 0.8, False), ("<", 0.79, True),
    ("==", 0.8, True), ("==", 0.81, False),
    # float noise: (0.7 + 0.9) / 2 and 0.1 * 8 are "0.8" as far as a gate is concerned
    (">=", 0.1 * 8 - 1e-15, True), ("==", (0.7 + 0.9) / 2, True), (">", 0.8 + 1e-15, False),
])
def test_bar_at_and_around_the_boundary(op: str, value: float, holds: bool) -> None:
    assert Bar("recall_at_5", op, 0.8).holds(value) is holds  # type: ignore[arg-type]


PY_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq}


@given(st.sampled_from(list(PY_OPS)), st.floats(-10, 10), st.floats(-10, 10))
def test_away_from_the_tolerance_a_bar_is_the_plain_comparison(op: str, value: float,
                                                               threshold: float) -> None:
    if abs(value - threshold) > 1e-6:
        bar = Bar("m", op, threshold)  # type: ignore[arg-type]
        assert bar.holds(value) is PY_OPS[op](value, threshold)


# --- bars on a run --------------------------------------------------------------------------


def test_bars_on_run_means_and_the_lines(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")])  # recall_at_5 mean 0.8, groundedness 1.0
    result = evaluate_gate(run, bars(recall_at_5=">= 0.8", hit_at_5="> 0.8", groundedness="==1"))
    assert [(r.passed, r.value, r.reason) for r in result.bars] == [
        (True, 0.8, "got 0.800"), (False, 0.75, "got 0.750"), (True, 1.0, "got 1.000")]
    assert not result.passed
    assert format_result(result) == [
        "ok   recall_at_5 >= 0.8: got 0.800",
        "FAIL hit_at_5 > 0.8: got 0.750",
        "ok   groundedness == 1: got 1.000",
        "gate FAILED for run r1: 1 of 3 bars violated",
    ]


def test_all_bars_hold_passes(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")])
    result = evaluate_gate(run, bars(recall_at_5=">= 0.5", correct="< 0.6"))
    assert result.passed
    assert format_result(result)[-1] == "gate passed for run r1: 2 bars ok"


def test_a_mean_of_none_fails_every_operator(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")], answer={"groundedness": None, "correct": 1.0})
    for expr in (">= 0", "<= 1", "== 0"):
        result = evaluate_gate(run, bars(groundedness=expr))
        (got,) = result.bars
        assert (got.value, got.passed, got.reason) == (None, False, "not measured (n=0)")
        assert not result.passed
    assert format_result(result)[0] == "FAIL groundedness == 0: not measured (n=0)"


def test_reason_shows_enough_digits_to_explain_a_verdict(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")], retrieval={"recall_at_5": 0.79999999})
    result = evaluate_gate(run, bars(recall_at_5=">= 0.8"))
    assert result.bars[0].reason == "got 0.79999999"  # "0.800" would read as a pass


def test_a_bar_on_a_metric_the_run_lacks_is_bad_input(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")])
    with pytest.raises(InputError) as info:
        evaluate_gate(run, bars(recall_at_3=">= 0.5"))
    assert info.value.path == str(run / "metrics.json")
    assert info.value.field == "gate.recall_at_3"
    assert "did you mean recall_at_5" in info.value.message
    assert run_metric_names(run) == ["recall_at_5", "recall_at_10", "hit_at_5", "groundedness",
                                     "correct"]


def test_nothing_to_check_is_bad_input(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", [q("q1")])
    with pytest.raises(InputError, match="nothing to check"):
        evaluate_gate(run, [])


# --- per question, against a baseline -------------------------------------------------------


def baseline_pair(tmp_path: Path) -> tuple[Path, Path]:
    old = make_run(tmp_path, "old", [
        q("q1"),                                   # pass → pass
        q("q2"),                                   # pass → fail (found)
        q("q3", correct=0),                        # fail → pass (right)
        q("q4"),                                   # pass → fail (grounded)
        q("q5"),                                   # only in the baseline
        q("q7", correct=None),                     # None is not a failure: pass → pass
        q("q8", correct=0),                        # fail → fail (another check): no flip
        q("q9", answerable=False, correct=1),      # declined → answered: right pass → fail
    ], retrieval={"recall_at_5": 0.7, "recall_at_10": 0.9, "hit_at_5": 0.75},
        answer={"correct": 0.5})
    new = make_run(tmp_path, "new", [
        q("q1"),
        q("q2", hit=0),
        q("q3"),
        q("q4", grounded=0, reason="no source", types=("citation_failure.insufficient_citation",),
          topic="warranty"),
        q("q6"),
        q("q7", correct=None),
        q("q8", hit=0),
        q("q9", answerable=False, correct=0, types=("answer_failure.failed_to_abstain",)),
    ])
    return new, old


def test_regressions_fixes_and_one_sided_questions(tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    result = evaluate_gate(new, [], baseline_dir=old)
    assert [(f.question_id, f.checks) for f in result.regressions] == [
        ("q2", ("found",)), ("q4", ("grounded",)), ("q9", ("right",))]
    assert [(f.question_id, f.checks) for f in result.fixes] == [("q3", ("right",))]
    assert result.only_in_run == ["q6"]
    assert result.only_in_baseline == ["q5"]
    assert (result.run_id, result.baseline_id, result.found_metric) == ("new", "old", "hit_at_5")
    assert not result.passed


def test_passed_with_and_without_fail_on_regression(tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    gate = bars(recall_at_5=">= 0.5")
    strict = evaluate_gate(new, gate, baseline_dir=old)
    lenient = evaluate_gate(new, gate, baseline_dir=old, fail_on_regression=False)
    assert all(r.passed for r in strict.bars) and not strict.passed
    assert lenient.passed and len(lenient.regressions) == 3
    assert format_result(strict) == [
        "ok   recall_at_5 >= 0.5: got 0.800 (baseline 0.700, +0.100)",
        "REGRESSION q2: found pass→fail",
        "REGRESSION q4: grounded pass→fail",
        "REGRESSION q9: right pass→fail",
        "fixed      q3: right fail→pass",
        "note: 1 question only in this run: q6",
        "note: 1 question only in the baseline: q5",
        "gate FAILED for run new: 1 bar ok; 3 regressions, 1 fix vs baseline old",
    ]
    assert format_result(lenient)[-1] == (
        "gate passed for run new: 1 bar ok; 3 regressions (not failing: fail_on_regression "
        "is off), 1 fix vs baseline old")


def test_the_same_run_as_baseline_has_no_flips(tmp_path: Path) -> None:
    new, _ = baseline_pair(tmp_path)
    result = evaluate_gate(new, [], baseline_dir=new)
    assert result.passed
    assert (result.regressions, result.fixes, result.only_in_run, result.only_in_baseline) == (
        [], [], [], [])
    assert format_result(result) == [
        "gate passed for run new: no bars; 0 regressions, 0 fixes vs baseline new"]


def test_baseline_means_and_deltas(tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    result = evaluate_gate(new, bars(recall_at_5=">= 0.5", groundedness="== 1"),
                           baseline_dir=old)
    recall, grounded = result.bars
    assert recall.baseline_value == 0.7 and recall.delta == pytest.approx(0.8 - 0.7)
    # the baseline did not measure groundedness at all: no baseline value, no delta
    assert grounded.baseline_value is None and grounded.delta is None
    assert format_result(result)[1] == "ok   groundedness == 1: got 1.000"


def test_found_uses_the_smallest_hit_cutoff_or_the_rank(tmp_path: Path) -> None:
    assert pick_found_metric([{"hit_at_10": 1, "hit_at_3": 0, "rank": 4}]) == "hit_at_3"
    assert pick_found_metric([{"recall_at_5": 1.0, "rank": 4}]) == "rank"
    run = make_run(tmp_path, "r", [
        q("a", metrics={"hit_at_3": 0, "hit_at_10": 1, "rank": 4}),   # rank 4 > 3: not found
        q("b", metrics={"rank": 2}),                                 # no hit_at_3: 0 < 2 <= 3
        q("c", metrics={"hit_at_3": None, "rank": None}),            # not measured: no failure
    ])
    got = {x.question_id: x.checks["found"] for x in load_run(run).questions}
    assert got == {"a": False, "b": True, "c": None}
    ranks = make_run(tmp_path, "ranks", [q("a", metrics={"rank": 0}), q("b", metrics={"rank": 7})])
    loaded = load_run(ranks)
    assert loaded.found_metric == "rank"
    assert [x.checks["found"] for x in loaded.questions] == [False, True]


def test_the_baseline_is_judged_with_the_runs_found_metric(tmp_path: Path) -> None:
    new = make_run(tmp_path, "new", [q("a", metrics={"hit_at_3": 1, "rank": 3})])
    # the baseline measured only hit_at_10; its rank 6 is not within the run's k = 3
    old = make_run(tmp_path, "old", [q("a", metrics={"hit_at_10": 1, "rank": 6})])
    result = evaluate_gate(new, [], baseline_dir=old)
    assert [(f.question_id, f.checks) for f in result.fixes] == [("a", ("found",))]


def test_found_metric_can_be_chosen(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [q("a", metrics={"hit_at_5": 0, "hit_at_10": 1, "rank": 7})])
    assert not evaluate_gate(run, [], baseline_dir=run).questions[0].passed
    chosen = evaluate_gate(run, [], baseline_dir=run, found_metric="hit_at_10")
    assert chosen.found_metric == "hit_at_10" and chosen.questions[0].passed
    with pytest.raises(ValueError, match="found_metric must be"):
        evaluate_gate(run, [], baseline_dir=run, found_metric="recall_at_5")


def test_unanswerable_questions_have_only_the_right_check(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [q("u", answerable=False, correct=1)])
    (u,) = load_run(run).questions
    assert u.checks == {"right": True} and u.passed


# --- JUnit XML --------------------------------------------------------------------------------


def junit(result: Any, run: Path, tmp_path: Path) -> ET.Element:
    path = tmp_path / "reports" / "gate.xml"
    write_junit(result, run, path)
    return ET.parse(path).getroot()


def cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in suite.iter("testcase")}


def test_junit_structure_counts_and_messages(tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    result = evaluate_gate(new, bars(recall_at_5=">= 0.9", correct="<= 1"), baseline_dir=old)
    root = junit(result, new, tmp_path)
    assert root.tag == "testsuites"
    gate, questions = root.findall("testsuite")
    assert (gate.get("name"), questions.get("name")) == ("ragassay.gate", "ragassay.questions")

    # gate: 2 bars + the regression case; recall fails, the regressions fail
    assert (gate.get("tests"), gate.get("failures"), gate.get("skipped")) == ("3", "2", "0")
    g = cases(gate)
    assert list(g) == ["recall_at_5 >= 0.9", "correct <= 1", "no regressions vs baseline old"]
    assert all(c.get("classname") == "gate" for c in g.values())
    assert g["recall_at_5 >= 0.9"].find("failure").get("message") == "got 0.800"  # type: ignore[union-attr]
    assert g["correct <= 1"].find("failure") is None
    assert g["no regressions vs baseline old"].find("failure").get("message") == (  # type: ignore[union-attr]
        "3 questions went pass→fail: q2 (found), q4 (grounded), q9 (right)")
    props = {p.get("name"): p.get("value") for p in gate.iter("property")}
    assert props == {"run_id": "new", "found": "hit_at_5", "baseline_id": "old"}

    # questions: the run's 8, failing q2 (found), q4 (grounded), q8 (found), q9 (right)
    c = cases(questions)
    assert list(c) == [f"{qid}: question {qid}?" for qid in
                       ("q1", "q2", "q3", "q4", "q6", "q7", "q8", "q9")]
    failing = [name.split(":")[0] for name, e in c.items() if e.find("failure") is not None]
    assert failing == ["q2", "q4", "q8", "q9"]
    assert (questions.get("tests"), questions.get("failures")) == ("8", "4")
    q4 = c["q4: question q4?"]
    assert q4.get("classname") == "warranty"
    assert q4.find("failure").get("message") == (  # type: ignore[union-attr]
        "failed: grounded; groundedness: no source; "
        "failure types: citation_failure.insufficient_citation")
    assert c["q9: question q9?"].find("failure").get("message") == (  # type: ignore[union-attr]
        "failed: right; failure types: answer_failure.failed_to_abstain")
    assert c["q1: question q1?"].get("classname") == "questions"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("11", "6", "0")


def test_junit_skips_regressions_when_they_do_not_fail_and_unmeasured_questions(
        tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    result = evaluate_gate(new, [], baseline_dir=old, fail_on_regression=False)
    gate = junit(result, new, tmp_path).find("testsuite")
    assert gate is not None and (gate.get("failures"), gate.get("skipped")) == ("0", "1")
    skipped = gate.find("testcase/skipped")
    assert skipped is not None and skipped.get("message", "").startswith(
        "fail_on_regression is off; 3 questions went pass→fail")

    run = make_run(tmp_path, "unmeasured", [q("u", answerable=False, correct=None)])
    root = junit(evaluate_gate(run, bars(correct=">= 0")), run, tmp_path)
    questions = root.findall("testsuite")[1]
    assert (questions.get("tests"), questions.get("failures"), questions.get("skipped")) == (
        "1", "0", "1")
    assert questions.find("testcase/skipped").get("message") == "not measured: right"  # type: ignore[union-attr]


def test_junit_names_are_short_and_always_valid_xml(tmp_path: Path) -> None:
    long = "하자보수 기간은\x01 얼마인가요? " * 10
    run = make_run(tmp_path, "r", [q("q1", text=long, correct=0)])
    result = evaluate_gate(run, bars(correct=">= 1"))
    root = junit(result, run, tmp_path)  # would not parse with the raw \x01
    name = root.findall("testsuite")[1].find("testcase").get("name", "")  # type: ignore[union-attr]
    assert name.startswith("q1: 하자보수 기간은\ufffd 얼마인가요?") and name.endswith("…")
    assert len(name) == len("q1: ") + 60


def test_junit_is_deterministic_and_written_atomically(tmp_path: Path) -> None:
    new, old = baseline_pair(tmp_path)
    gate = bars(recall_at_5=">= 0.9")
    first = render_junit(evaluate_gate(new, gate, baseline_dir=old), new)
    again = render_junit(evaluate_gate(new, gate, baseline_dir=old), new)
    assert first == again
    assert first.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites")
    out = tmp_path / "out"
    write_junit(evaluate_gate(new, gate, baseline_dir=old), new, out / "a.xml")
    write_junit(evaluate_gate(new, gate, baseline_dir=old), new, out / "a.xml")  # replaces
    assert [p.name for p in out.iterdir()] == ["a.xml"]  # no temporary file left behind
    assert (out / "a.xml").read_bytes() == first


# --- bad run folders -------------------------------------------------------------------------


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        evaluate_gate(tmp_path / "nope", bars(recall_at_5=">= 0.5"))
    assert info.value.path == str(tmp_path / "nope" / "metrics.json")
    assert "file not found" in info.value.message
    for name in ("answers.jsonl", "retrieved_chunks.jsonl"):
        run = make_run(tmp_path, f"no-{name}", [q("q1")])
        (run / name).unlink()
        with pytest.raises(InputError) as info:
            evaluate_gate(run, bars(recall_at_5=">= 0.5"))
        assert info.value.path == str(run / name)
    run = make_run(tmp_path, "no-failures", [q("q1")])
    (run / "failure_cases.jsonl").unlink()
    with pytest.raises(InputError, match="failure_cases.jsonl: file not found"):
        render_junit(evaluate_gate(run, bars(recall_at_5=">= 0.5")), run)


def rewrite(path: Path, edit: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(edit(json.loads(path.read_text(encoding="utf-8")))),
                    encoding="utf-8")


@pytest.mark.parametrize(("edit", "field", "says"), [
    (lambda m: {k: v for k, v in m.items() if k != "answer"}, "answer", "mapping of metric"),
    (lambda m: {**m, "retrieval": {"recall_at_5": 0.8}}, "retrieval.recall_at_5", "mean"),
    (lambda m: {**m, "answer": {"correct": {"mean": "high"}}}, "answer.correct.mean",
     "finite number or null"),
    (lambda m: [m], None, "expected a JSON object"),
])
def test_malformed_metrics_json(tmp_path: Path, edit: Callable[[Any], Any], field: str | None,
                                says: str) -> None:
    run = make_run(tmp_path, "r", [q("q1")])
    rewrite(run / "metrics.json", edit)
    with pytest.raises(InputError) as info:
        load_run(run)
    assert info.value.path == str(run / "metrics.json")
    assert info.value.field == field and says in info.value.message


def test_metrics_json_syntax_error_has_its_line(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [q("q1")])
    (run / "metrics.json").write_text('{\n"retrieval": {,\n}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_run(run)
    assert info.value.line == 2 and "malformed JSON" in info.value.message


def test_malformed_rows_are_named_by_file_line_and_field(tmp_path: Path) -> None:
    run = make_run(tmp_path, "dup", [q("q1"), q("q1")])
    with pytest.raises(InputError) as info:
        load_run(run)
    assert (info.value.line, info.value.field) == (2, "question_id")
    assert "duplicate question_id 'q1' (first on line 1)" in info.value.message

    run = make_run(tmp_path, "answerable", [q("q1")])
    (run / "answers.jsonl").write_text('{"question_id": "q1", "answerable": "yes", "scores": {}}\n',
                                       encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_run(run)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(run / "answers.jsonl"), 1, "answerable")

    run = make_run(tmp_path, "score", [q("q1")])
    rows = (run / "answers.jsonl").read_text(encoding="utf-8").replace('"correct": 1',
                                                                      '"correct": "yes"')
    (run / "answers.jsonl").write_text(rows, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_run(run)
    assert info.value.field == "scores.correct"

    run = make_run(tmp_path, "unpaired", [q("q1"), q("q2")])
    lines = (run / "retrieved_chunks.jsonl").read_text(encoding="utf-8").splitlines()
    (run / "retrieved_chunks.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no row for question 'q2' of answers.jsonl"):
        load_run(run)


# --- a real run of the shipped fixture ----------------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ragassay.config import load_config
    from ragassay.run import run_evaluation

    out = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)  # the config's paths are relative to the repository root
        result = run_evaluation(load_config("configs/eval/rag_quality_v1.yaml"),
                                run_id="gate", output_root=out)
    return result.run_dir


def test_gate_on_a_real_run(real_run: Path, tmp_path: Path) -> None:
    metrics = json.loads((real_run / "metrics.json").read_text(encoding="utf-8"))
    recall = metrics["retrieval"]["recall_at_5"]["mean"]
    gate = parse_gate({"recall_at_5": f">= {recall!r}", "correct": "> 1"}, source="config",
                      known_metrics=run_metric_names(real_run))
    result = evaluate_gate(real_run, gate, baseline_dir=real_run)
    assert [r.passed for r in result.bars] == [True, False]  # at the boundary; above the maximum
    assert not result.passed and result.regressions == [] and result.fixes == []
    assert result.found_metric == "hit_at_5"
    assert len(result.questions) == metrics["counts"]["questions"]
    assert format_result(result)[1].startswith("FAIL correct > 1: got ")

    root = junit(result, real_run, tmp_path)
    questions = root.findall("testsuite")[1]
    failed = sum(not x.passed for x in result.questions)
    assert questions.get("tests") == str(metrics["counts"]["questions"])
    assert questions.get("failures") == str(failed) == str(len(questions.findall(".//failure")))
    assert render_junit(result, real_run) == render_junit(
        evaluate_gate(real_run, gate, baseline_dir=real_run), real_run)
