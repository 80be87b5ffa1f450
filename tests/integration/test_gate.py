"""The CI gate: parsing bars and options, checking them on a run, flips against a baseline,
JUnit XML, and `ragassay gate` / `ragassay run --gate` through the command line.

Runs are built in memory with :func:`ragassay.evaluate_rag` from small hand-made
records (`Q` below: each question's gold chunk, the rank it is retrieved at, whether the
answer cites its context and holds the expected word), so every expected value can be read
off the spec; one test at the end gates a real run of the shipped fixture.
"""

from __future__ import annotations

import json
import operator
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragassay import evaluate_rag
from ragassay.cli import app
from ragassay.config import EvalConfig, MetricsConfig, PipelineConfig
from ragassay.errors import InputError
from ragassay.gate import (
    Bar,
    GateConfig,
    evaluate_gate,
    format_result,
    parse_bar,
    parse_bar_text,
    parse_gate,
    parse_gate_config,
    render_junit,
    write_junit,
)
from ragassay.runfolder import Aggregate, RunResult, read_run_folder
from ragassay.schema import (
    Answer,
    Chunk,
    Citation,
    GoldEvidence,
    GoldRecord,
    Prediction,
    Question,
    RetrievedChunk,
)

KNOWN = ["recall_at_5", "recall_at_10", "hit_at_5", "groundedness", "correct"]
runner = CliRunner()
NO_PREDICTION = "no prediction for this question"  # why a question without one has no result


# --- hand-made runs -------------------------------------------------------------------------

# Chunks that are never gold: they push a gold chunk down the ranking (rank r = r-1 fillers
# first), and an unanswerable question retrieves the first.
FILLERS = [Chunk(chunk_id=f"f{i}", doc_id="misc", text=f"Filler {i}: cats sleep most of the day.")
           for i in range(1, 4)]
WRONG = "The answer is grey."


@dataclass(frozen=True)
class Q:
    """One question and the system's output for it.

    An answerable question ``qN`` has one gold chunk ``g-qN`` holding the word ``word-qN``
    (its ``must_contain``). ``rank``: where the gold chunk is retrieved (None: not at all),
    so found = ``rank <= k``; ``grounded``: the answer cites its top context chunk (else
    nothing: groundedness 0, "no source"); ``right``: the answer holds the word;
    ``must=False``: no ``must_contain`` (right is not measured). An unanswerable question
    is right when it ``declines``. ``predicted=False``: no prediction (not measured).
    """

    qid: str
    rank: int | None = 1
    grounded: bool = True
    right: bool = True
    answerable: bool = True
    declines: bool = True
    must: bool = True
    predicted: bool = True
    topic: str | None = None
    text: str | None = None

    @property
    def word(self) -> str:
        return f"word-{self.qid}"

    def question(self) -> Question:
        return Question(question_id=self.qid, question=self.text or f"question {self.qid}?",
                        answerable=self.answerable, topic=self.topic,
                        must_contain=[self.word] if self.answerable and self.must else [])

    def chunks(self) -> list[Chunk]:
        if not self.answerable:
            return []
        return [Chunk(chunk_id=f"g-{self.qid}", doc_id="facts",
                      text=f"The answer to {self.qid} is {self.word}.")]

    def gold(self) -> list[GoldRecord]:
        if not self.answerable:
            return []
        return [GoldRecord(question_id=self.qid,
                           gold_evidence=[GoldEvidence(chunk_id=f"g-{self.qid}")])]

    def prediction(self) -> Prediction:
        if not self.answerable:
            ranked = [FILLERS[0].chunk_id]
            if self.declines:
                return Prediction(question_id=self.qid,
                                  retrieved=[RetrievedChunk(chunk_id=ranked[0])],
                                  answer=Answer(text="I don't know.", status="abstained"))
        else:
            ranked = [f.chunk_id for f in FILLERS]
            if self.rank is not None:
                ranked = ranked[: self.rank - 1] + [f"g-{self.qid}"]
        text = f"The answer is {self.word}." if self.answerable and self.right else WRONG
        cites = [Citation(chunk_id=ranked[0])] if self.grounded else []
        return Prediction(question_id=self.qid,
                          retrieved=[RetrievedChunk(chunk_id=c, score=1.0 / (i + 1))
                                     for i, c in enumerate(ranked)],
                          answer=Answer(text=text, status="supported", citations=cites))


RETRIEVAL = ("recall_at_1", "hit_at_1", "recall_at_2")
ANSWER = ("groundedness", "correct", "answer_relevancy")


def config(k: int = 1, retrieval: Sequence[str] = RETRIEVAL, hit_policy: str = "any"
           ) -> EvalConfig:
    return EvalConfig(pipeline=PipelineConfig(top_k=k),
                      metrics=MetricsConfig(retrieval=list(retrieval), answer=list(ANSWER),
                                            hit_policy=hit_policy,  # type: ignore[arg-type]
                                            bootstrap_resamples=100))


def make_run(run_id: str, specs: Sequence[Q], *, k: int = 1,
             retrieval: Sequence[str] = RETRIEVAL, hit_policy: str = "any") -> RunResult:
    """Evaluate the specs' predictions in memory (every run shares one chunk store)."""
    chunks = [*FILLERS, *(c for s in specs for c in s.chunks())]
    return evaluate_rag([s.question() for s in specs], [g for s in specs for g in s.gold()],
                    [s.prediction() for s in specs if s.predicted], chunks,
                    config(k, retrieval, hit_policy), run_id=run_id)


def with_means(run: RunResult, **means: float | None) -> RunResult:
    """The run with some retrieval means replaced (for values no small run gives)."""
    retrieval = dict(run.metrics.retrieval)
    for name, mean in means.items():
        retrieval[name] = Aggregate(mean=mean, n=0 if mean is None else 5, missing=0,
                                    ci_low=mean, ci_high=mean)
    return RunResult(run.metrics.model_copy(update={"retrieval": retrieval}), run.questions)


def bars(**exprs: str) -> list[Bar]:
    return [parse_bar(m, e) for m, e in exprs.items()]


# Five answerable questions: q5 is not found at k=1, q3 is wrong. Means: recall_at_1 0.8,
# hit_at_1 0.8, recall_at_2 1.0, groundedness 1.0, correct 0.8, answer_relevancy None.
FIVE = [Q("q1"), Q("q2"), Q("q3", right=False), Q("q4"), Q("q5", rank=2)]


def test_the_hand_made_records_score_as_their_specs_say() -> None:
    run = make_run("r1", [*FIVE, Q("q6", grounded=False), Q("q7", must=False),
                          Q("u1", answerable=False), Q("u2", answerable=False, declines=False),
                          Q("q8", predicted=False)])
    got = {q.question_id: (q.checks.found, q.checks.grounded, q.checks.right, q.not_measured)
           for q in run.questions}
    assert got == {
        "q1": (True, True, True, None), "q2": (True, True, True, None),
        "q3": (True, True, False, None), "q4": (True, True, True, None),
        "q5": (False, True, True, None), "q6": (True, False, True, None),
        "q7": (True, True, None, None), "u1": (None, True, True, None),
        "u2": (None, True, False, None), "q8": (None, None, None, NO_PREDICTION),
    }
    assert run.question("q6").scores["groundedness_reason"] == "no source"
    means = {name: agg.mean for name, agg in make_run("r", FIVE).metrics.means().items()}
    assert means.pop("answer_relevancy") is None  # no question has expected_terms
    assert means == pytest.approx({"recall_at_1": 0.8, "hit_at_1": 0.8, "recall_at_2": 1.0,
                                   "groundedness": 1.0, "correct": 0.8})


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
    with pytest.raises(InputError, match=r"the run measures: \(none\)"):
        parse_bar("latency", "< 5", known_metrics=[])


def test_parse_gate_refuses_a_non_mapping() -> None:
    with pytest.raises(InputError, match="expected a mapping"):
        parse_gate(["recall_at_5 >= 0.8"], source="c.yaml", known_metrics=KNOWN)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="expected a mapping"):
        parse_gate_config("recall_at_5 >= 0.8", source="c.yaml", known_metrics=KNOWN)  # type: ignore[arg-type]


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


# --- the gate: mapping's options ----------------------------------------------------------------


def test_gate_config_splits_options_from_bars() -> None:
    got = parse_gate_config({"allow_missing": 2, "correct": "== 1", "junit_questions": "strict",
                             "recall_at_5": ">= 0.8"}, source="c.yaml", known_metrics=KNOWN)
    assert [str(b) for b in got.bars] == ["correct == 1", "recall_at_5 >= 0.8"]
    assert (got.allow_missing, got.junit_questions) == (2, "strict")
    default = parse_gate_config({"correct": "== 1"}, source="c.yaml", known_metrics=KNOWN)
    assert (default.allow_missing, default.junit_questions) == (0, "flips")
    assert parse_gate_config({}, source="c.yaml", known_metrics=KNOWN) == GateConfig([])


@pytest.mark.parametrize(("mapping", "field", "says"), [
    ({"allow_missing": -1}, "gate.allow_missing", "expected a whole number >= 0, got -1"),
    ({"allow_missing": True}, "gate.allow_missing", "got True"),
    ({"allow_missing": "2"}, "gate.allow_missing", "got '2'"),
    ({"allow_missing": 1.5}, "gate.allow_missing", "got 1.5"),
    ({"junit_questions": "all"}, "gate.junit_questions", "expected flips or strict, got 'all'"),
    ({"allow_missing": 1, "recal_at_5": ">= 0.8"}, "gate.recal_at_5", "did you mean recall_at_5"),
    ({"allow_missing": 1, "recall_at_5": 0.8}, "gate.recall_at_5", "a bare number (0.8)"),
])
def test_gate_config_refuses_bad_options(mapping: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(InputError) as info:
        parse_gate_config(mapping, source="c.yaml", known_metrics=KNOWN)
    assert (info.value.path, info.value.field) == ("c.yaml", field)
    assert says in info.value.message


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


def test_bars_on_run_means_and_the_lines() -> None:
    run = make_run("r1", FIVE)
    result = evaluate_gate(run, bars(recall_at_1=">= 0.8", hit_at_1="> 0.8", groundedness="==1"))
    assert [(r.passed, r.value, r.reason) for r in result.bars] == [
        (True, pytest.approx(0.8), "got 0.800"), (False, pytest.approx(0.8), "got 0.800"),
        (True, 1.0, "got 1.000")]
    assert not result.passed
    assert format_result(result) == [
        "ok   recall_at_1 >= 0.8: got 0.800",
        "FAIL hit_at_1 > 0.8: got 0.800",
        "ok   groundedness == 1: got 1.000",
        "gate FAILED for run r1: 1 of 3 bars violated",
    ]


def test_all_bars_hold_passes_though_some_questions_fail_their_checks() -> None:
    run = make_run("r1", FIVE)
    result = evaluate_gate(run, bars(recall_at_1=">= 0.5", correct="< 0.9"))
    assert result.passed
    assert result.failing_questions == ["q3", "q5"]  # reported, not failing the gate
    assert format_result(result) == ["ok   recall_at_1 >= 0.5: got 0.800",
                                     "ok   correct < 0.9: got 0.800",
                                     "gate passed for run r1: 2 bars ok"]


def test_a_mean_of_none_fails_every_operator() -> None:
    run = make_run("r1", FIVE)  # no question has expected_terms: answer_relevancy is None
    for expr in (">= 0", "<= 1", "== 0"):
        result = evaluate_gate(run, bars(answer_relevancy=expr))
        (got,) = result.bars
        assert (got.value, got.passed, got.reason) == (None, False, "not measured (n=0)")
        assert not result.passed
    assert format_result(result)[0] == "FAIL answer_relevancy == 0: not measured (n=0)"


def test_reason_shows_enough_digits_to_explain_a_verdict() -> None:
    run = with_means(make_run("r1", FIVE), recall_at_1=0.79999999)
    result = evaluate_gate(run, bars(recall_at_1=">= 0.8"))
    assert result.bars[0].reason == "got 0.79999999"  # "0.800" would read as a pass
    run = with_means(run, recall_at_1=0.1 * 8 - 1e-15)  # within the tolerance: a pass
    assert evaluate_gate(run, bars(recall_at_1=">= 0.8")).bars[0].reason == "got 0.800"


def test_a_bar_on_a_metric_the_run_lacks_is_bad_input(tmp_path: Path) -> None:
    run = make_run("r1", FIVE)
    with pytest.raises(InputError) as info:
        evaluate_gate(run, bars(recal_at_1=">= 0.5"), run_dir=tmp_path / "r1")
    assert info.value.path == str(tmp_path / "r1" / "metrics.json")
    assert info.value.field == "gate.recal_at_1"
    assert "did you mean recall_at_1" in info.value.message
    assert ("(the run measures: recall_at_1, hit_at_1, recall_at_2, groundedness, correct, "
            "answer_relevancy)") in info.value.message
    with pytest.raises(InputError) as info:  # without a folder, the run id stands for it
        evaluate_gate(run, bars(latency=">= 0.5"))
    assert info.value.path == str(Path("r1") / "metrics.json")


def test_nothing_to_check_is_bad_input() -> None:
    run = make_run("r1", FIVE)
    with pytest.raises(InputError, match="nothing to check"):
        evaluate_gate(run, [])
    with pytest.raises(InputError, match="nothing to check"):
        evaluate_gate(run, GateConfig([], allow_missing=3))
    # strict needs no bar: every question is then a check
    assert not evaluate_gate(run, GateConfig([], junit_questions="strict")).passed


# --- questions without a result ---------------------------------------------------------------


def test_a_question_without_a_prediction_fails_the_gate_unless_allowed() -> None:
    run = make_run("r1", [*FIVE, Q("q6", predicted=False), Q("q7", predicted=False)])
    assert run.question("q6").not_measured == NO_PREDICTION
    gate = bars(recall_at_2=">= 0.5")
    result = evaluate_gate(run, gate)
    assert result.not_measured == ["q6", "q7"] and not result.passed
    assert all(r.passed for r in result.bars)
    assert format_result(result) == [
        "ok   recall_at_2 >= 0.5: got 1.000",
        "FAIL not measured: q6, q7",
        "gate FAILED for run r1: 1 bar ok; 2 questions not measured (allowed: 0)",
    ]
    assert not evaluate_gate(run, GateConfig(gate, allow_missing=1)).passed
    allowed = evaluate_gate(run, GateConfig(gate, allow_missing=2))
    assert allowed.passed
    assert format_result(allowed)[1:] == [
        "note not measured: q6, q7",
        "gate passed for run r1: 1 bar ok; 2 questions not measured (allowed: 2)",
    ]
    assert evaluate_gate(make_run("r1", FIVE), gate).not_measured == []


def test_strict_fails_the_gate_on_any_failing_question() -> None:
    run = make_run("r1", FIVE)
    result = evaluate_gate(run, GateConfig(bars(recall_at_1=">= 0.5"), junit_questions="strict"))
    assert not result.passed and result.failing_questions == ["q3", "q5"]
    assert format_result(result)[1:] == [
        "FAIL failing questions (strict): q3, q5",
        "gate FAILED for run r1: 1 bar ok; 2 failing questions (strict)",
    ]
    clean = make_run("r1", [Q("q1"), Q("q7", must=False), Q("u1", answerable=False)])
    result = evaluate_gate(clean, GateConfig(bars(recall_at_1=">= 0.5"),
                                             junit_questions="strict"))
    assert result.passed  # a check that is not measured (q7's right) does not fail
    assert format_result(result)[-1] == (
        "gate passed for run r1: 1 bar ok; 0 failing questions (strict)")
    one = make_run("r1", [Q("q1"), Q("q2", right=False)])
    assert format_result(evaluate_gate(one, GateConfig([], junit_questions="strict")))[-1] == (
        "gate FAILED for run r1: no bars; 1 failing question (strict)")


# --- per question, against a baseline -------------------------------------------------------


def baseline_pair() -> tuple[RunResult, RunResult]:
    old = make_run("old", [
        Q("q1"),                                        # pass → pass
        Q("q2"),                                        # pass → fail (found)
        Q("q3", right=False),                           # fail → pass (right)
        Q("q4"),                                        # pass → fail (grounded)
        Q("q5"),                                        # only in the baseline
        Q("q7", must=False),                            # None is not a failure: pass → pass
        Q("q8", right=False),                           # fail → fail (another check): no flip
        Q("q9", answerable=False),                      # declined → answered: right pass → fail
    ])
    new = make_run("new", [
        Q("q1"),
        Q("q2", rank=2),
        Q("q3"),
        Q("q4", grounded=False, topic="warranty"),
        Q("q6"),
        Q("q7", must=False),
        Q("q8", rank=2),
        Q("q9", answerable=False, declines=False),
    ])
    return new, old


def test_regressions_fixes_and_one_sided_questions() -> None:
    new, old = baseline_pair()
    result = evaluate_gate(new, [], baseline=old)
    assert [(f.question_id, f.checks) for f in result.regressions] == [
        ("q2", ("found",)), ("q4", ("grounded",)), ("q9", ("right",))]
    assert [(f.question_id, f.checks) for f in result.fixes] == [("q3", ("right",))]
    assert result.regressions[0].question == "question q2?"
    assert result.only_in_run == ["q6"]
    assert result.only_in_baseline == ["q5"]
    assert (result.run_id, result.baseline_id, result.found) == (
        "new", "old", "hit_at_1 (hit policy any)")
    assert not result.passed


def test_passed_with_and_without_fail_on_regression() -> None:
    new, old = baseline_pair()
    gate = bars(recall_at_2=">= 0.5")
    strict = evaluate_gate(new, gate, baseline=old)
    lenient = evaluate_gate(new, gate, baseline=old, fail_on_regression=False)
    assert all(r.passed for r in strict.bars) and not strict.passed
    assert lenient.passed and len(lenient.regressions) == 3
    assert format_result(strict) == [
        "ok   recall_at_2 >= 0.5: got 1.000 (baseline 1.000, +0.000)",
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


def test_the_same_run_as_baseline_has_no_flips() -> None:
    new, _ = baseline_pair()
    result = evaluate_gate(new, [], baseline=new)
    assert result.passed
    assert (result.regressions, result.fixes, result.only_in_run, result.only_in_baseline) == (
        [], [], [], [])
    assert format_result(result) == [
        "gate passed for run new: no bars; 0 regressions, 0 fixes vs baseline new"]


def test_baseline_means_and_deltas() -> None:
    new, old = baseline_pair()
    # recall_at_1: new finds 5 of its 7 answerable questions, old all 7
    result = evaluate_gate(new, bars(recall_at_1=">= 0.5", groundedness="<= 1"), baseline=old)
    recall, grounded = result.bars
    assert recall.value == pytest.approx(5 / 7) and recall.baseline_value == 1.0
    assert recall.delta == pytest.approx(5 / 7 - 1)
    assert format_result(result)[:2] == [
        "ok   recall_at_1 >= 0.5: got 0.714 (baseline 1.000, -0.286)",
        "ok   groundedness <= 1: got 0.875 (baseline 1.000, -0.125)",
    ]
    # a baseline that did not measure the metric: no baseline value, no delta
    partial = RunResult(old.metrics.model_copy(update={"answer": {}}), old.questions)
    grounded = evaluate_gate(new, bars(groundedness="<= 1"), baseline=partial).bars[0]
    assert grounded.baseline_value is None and grounded.delta is None
    assert format_result(evaluate_gate(new, bars(groundedness="<= 1"), baseline=partial))[0] == (
        "ok   groundedness <= 1: got 0.875")


def test_a_question_without_a_result_on_either_side_is_no_flip() -> None:
    old = make_run("old", [Q("q1"), Q("q2", right=False), Q("q3", predicted=False)])
    new = make_run("new", [Q("q1", predicted=False), Q("q2", predicted=False), Q("q3", rank=2)])
    result = evaluate_gate(new, GateConfig([], allow_missing=2), baseline=old)
    # q1: passed before, no result now (counted under not measured, not a regression);
    # q2: failed before, no result now (not a fix); q3: no result before, failing now
    assert (result.regressions, result.fixes) == ([], [])
    assert (result.only_in_run, result.only_in_baseline) == ([], [])
    assert result.not_measured == ["q1", "q2"] and result.passed


def test_flips_are_counted_at_the_runs_k() -> None:
    # the baseline was judged at k=2 and stored hit_at_1 too; the run is judged at k=1
    old = make_run("old", [Q("q1", rank=1), Q("q2", rank=2), Q("q3", rank=2), Q("q4", rank=1)],
                   k=2)
    assert [q.checks.found for q in old.questions] == [True, True, True, True]  # at k=2
    new = make_run("new", [Q("q1", rank=2), Q("q2", rank=2), Q("q3", rank=1), Q("q4", rank=1)])
    result = evaluate_gate(new, [], baseline=old)
    # at k=1 the baseline found q1 and q4 only: q1 regressed, q3 is fixed, q2 failed on both
    assert [(f.question_id, f.checks) for f in result.regressions] == [("q1", ("found",))]
    assert [(f.question_id, f.checks) for f in result.fixes] == [("q3", ("found",))]
    assert result.found == "hit_at_1 (hit policy any)"


def test_a_baseline_without_the_runs_hit_at_k_is_bad_input(tmp_path: Path) -> None:
    old = make_run("old", [Q("q1"), Q("u1", answerable=False)], k=2, retrieval=["recall_at_2"])
    assert "hit_at_1" not in old.question("q1").retrieval
    new = make_run("new", [Q("q1"), Q("u1", answerable=False)])
    with pytest.raises(InputError) as info:
        evaluate_gate(new, [], baseline=old, baseline_dir=tmp_path / "old")
    assert info.value.path == str(tmp_path / "old" / "metrics.json")
    assert info.value.field == "checks.k"
    assert "judged at k=2 and holds no hit_at_1; rerun it with --k 1" in info.value.message
    # the other way round, the run's k is stored by the baseline: no error
    assert evaluate_gate(old, [], baseline=new).regressions == []


def test_a_baseline_with_another_hit_policy_is_bad_input() -> None:
    old = make_run("old", [Q("q1")], hit_policy="all")
    new = make_run("new", [Q("q1")])
    with pytest.raises(InputError) as info:
        evaluate_gate(new, [], baseline=old)
    assert info.value.field == "checks.hit_policy"
    assert "hit policy 'all', the run with 'any'" in info.value.message


# --- JUnit XML --------------------------------------------------------------------------------


def junit(result: Any, tmp_path: Path) -> ET.Element:
    path = tmp_path / "reports" / "gate.xml"
    write_junit(result, path)
    return ET.parse(path).getroot()


def cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name", ""): c for c in suite.iter("testcase")}


def failure(case: ET.Element) -> str | None:
    found = case.find("failure")
    return None if found is None else found.get("message")


def test_junit_structure_counts_and_messages(tmp_path: Path) -> None:
    new, old = baseline_pair()
    result = evaluate_gate(new, bars(recall_at_1=">= 0.9", correct="<= 1"), baseline=old)
    root = junit(result, tmp_path)
    assert root.tag == "testsuites" and root.get("name") == "ragassay"
    gate, questions = root.findall("testsuite")
    assert (gate.get("name"), questions.get("name")) == ("ragassay.gate", "ragassay.questions")

    # gate: one case per bar + every question measured + the regression case
    assert (gate.get("tests"), gate.get("failures"), gate.get("skipped")) == ("4", "2", "0")
    g = cases(gate)
    assert list(g) == ["recall_at_1 >= 0.9", "correct <= 1",
                       "every question measured (allowed missing: 0)",
                       "no regressions vs baseline old"]
    assert all(c.get("classname") == "gate" for c in g.values())
    assert failure(g["recall_at_1 >= 0.9"]) == "got 0.714"
    assert g["recall_at_1 >= 0.9"].find("failure").text == "baseline 1.0"  # type: ignore[union-attr]
    assert failure(g["correct <= 1"]) is None
    assert failure(g["every question measured (allowed missing: 0)"]) is None
    assert failure(g["no regressions vs baseline old"]) == (
        "3 questions went pass→fail: q2 (found), q4 (grounded), q9 (right)")
    props = {p.get("name"): p.get("value") for p in gate.iter("property")}
    assert props == {"run_id": "new", "found": "hit_at_1 (hit policy any)", "baseline_id": "old"}

    # questions: one case per question of the run; only the flips fail. q8 fails a check
    # (found) but failed before too: it is reported in system-out, not as a failure.
    c = cases(questions)
    assert list(c) == [f"{qid}: question {qid}?" for qid in
                       ("q1", "q2", "q3", "q4", "q6", "q7", "q8", "q9")]
    failing = [name.split(":")[0] for name, e in c.items() if e.find("failure") is not None]
    assert failing == ["q2", "q4", "q9"]
    assert (questions.get("tests"), questions.get("failures")) == ("8", "3")
    q4 = c["q4: question q4?"]
    assert q4.get("classname") == "warranty"
    labels = ", ".join(new.question("q4").failures)
    assert labels  # the run labelled the uncited answer
    assert failure(q4) == ("regression (grounded pass→fail); failed: grounded; groundedness: no "
                           f"source; failure types: {labels}")
    assert q4.find("failure").get("type") == "regression"  # type: ignore[union-attr]
    assert q4.find("failure").text == (  # type: ignore[union-attr]
        "q4: question q4?\nchecks: found=pass grounded=fail right=pass "
        "(found = hit_at_1 (hit policy any))")
    q8 = c["q8: question q8?"]
    assert failure(q8) is None
    assert q8.findtext("system-out", "").startswith("failed: found")
    assert "checks: found=fail grounded=pass right=pass" in q8.findtext("system-out", "")
    q7 = c["q7: question q7?"]
    # a passing question states its checks too
    assert q7.findtext("system-out", "").startswith("q7: question q7?\nchecks: found=pass")
    assert failure(q7) is None
    assert c["q1: question q1?"].get("classname") == "questions"
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "12", "5", "0", "0")


def test_junit_has_one_case_per_bar_and_one_per_question(tmp_path: Path) -> None:
    run = make_run("r1", [*FIVE, Q("u1", answerable=False)])
    gate = bars(recall_at_1=">= 0.5", hit_at_1=">= 0.5", groundedness="== 1")
    root = junit(evaluate_gate(run, gate), tmp_path)
    g, questions = root.findall("testsuite")
    assert list(cases(g)) == ["recall_at_1 >= 0.5", "hit_at_1 >= 0.5", "groundedness == 1",
                              "every question measured (allowed missing: 0)"]
    assert [name.split(":")[0] for name in cases(questions)] == [
        "q1", "q2", "q3", "q4", "q5", "u1"]
    assert (g.get("tests"), questions.get("tests"), root.get("tests")) == ("4", "6", "10")


def test_a_passing_gate_has_no_failures_though_questions_fail_checks(tmp_path: Path) -> None:
    run = make_run("r1", FIVE)  # q3 is wrong, q5 is not found at k=1
    result = evaluate_gate(run, bars(recall_at_1=">= 0.5"))
    assert result.passed
    root = junit(result, tmp_path)
    assert root.get("failures") == "0"
    questions = root.findall("testsuite")[1]
    assert questions.get("failures") == "0"
    c = cases(questions)
    assert c["q3: question q3?"].findtext("system-out", "").startswith("failed: right")
    assert c["q5: question q5?"].findtext("system-out", "").startswith(
        "failed: found; failure types: ")
    assert "checks: found=pass grounded=pass right=pass" in c["q1: question q1?"].findtext(
        "system-out", "")
    assert b'failures="0"' in render_junit(result)

    strict = evaluate_gate(run, GateConfig(bars(recall_at_1=">= 0.5"), junit_questions="strict"))
    assert not strict.passed
    root = junit(strict, tmp_path)
    questions = root.findall("testsuite")[1]
    c = cases(questions)
    assert [n.split(":")[0] for n, e in c.items() if e.find("failure") is not None] == ["q3", "q5"]
    assert c["q3: question q3?"].find("failure").get("type") == "question"  # type: ignore[union-attr]
    assert failure(c["q3: question q3?"]) == (
        f"failed: right; failure types: {', '.join(run.question('q3').failures)}")
    assert (questions.get("failures"), root.get("failures")) == ("2", "2")


def test_junit_not_measured_questions_are_skipped_and_counted(tmp_path: Path) -> None:
    run = make_run("r1", [Q("q1"), Q("q2", predicted=False), Q("q3", predicted=False)])
    result = evaluate_gate(run, GateConfig(bars(recall_at_1=">= 0.5"), allow_missing=1))
    assert not result.passed
    gate, questions = junit(result, tmp_path).findall("testsuite")
    assert failure(cases(gate)["every question measured (allowed missing: 1)"]) == (
        "2 questions not measured: q2, q3")
    one = evaluate_gate(make_run("r1", [Q("q1"), Q("q2", predicted=False)]),
                        bars(recall_at_1=">= 0.5"))
    assert failure(cases(ET.fromstring(render_junit(one)).findall("testsuite")[0])[
        "every question measured (allowed missing: 0)"]) == "1 question not measured: q2"
    assert (questions.get("tests"), questions.get("failures"), questions.get("skipped")) == (
        "3", "0", "2")
    skipped = cases(questions)["q2: question q2?"].find("skipped")
    assert skipped is not None and skipped.get("message") == f"not measured: {NO_PREDICTION}"

    allowed = evaluate_gate(run, GateConfig(bars(recall_at_1=">= 0.5"), allow_missing=2))
    root = junit(allowed, tmp_path)
    assert allowed.passed and root.get("failures") == "0" and root.get("skipped") == "2"


def test_junit_skips_regressions_when_they_do_not_fail(tmp_path: Path) -> None:
    new, old = baseline_pair()
    result = evaluate_gate(new, [], baseline=old, fail_on_regression=False)
    root = junit(result, tmp_path)
    gate, questions = root.findall("testsuite")
    assert (gate.get("failures"), gate.get("skipped")) == ("0", "1")
    skipped = gate.find("testcase/skipped")
    assert skipped is not None and skipped.get("message", "").startswith(
        "fail_on_regression is off; 3 questions went pass→fail")
    assert questions.get("failures") == "0" and root.get("failures") == "0"  # the gate passed
    q2 = cases(questions)["q2: question q2?"]
    assert q2.findtext("system-out", "").startswith("failed: found")


def test_junit_names_are_short_and_always_valid_xml(tmp_path: Path) -> None:
    long = "하자보수 기간은\x01 얼마인가요? " * 10
    run = make_run("r\x02", [Q("q1", text=long, right=False)])
    result = evaluate_gate(run, bars(correct=">= 1"))
    root = junit(result, tmp_path)  # would not parse with the raw \x01
    case = root.findall("testsuite")[1].find("testcase")
    assert case is not None
    name = case.get("name", "")
    assert name.startswith("q1: 하자보수 기간은\ufffd 얼마인가요?") and name.endswith("…")
    assert len(name) == len("q1: ") + 60
    assert "\ufffd" in case.findtext("system-out", "")  # the full question, cleaned too
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["run_id"] == "r\ufffd"


def test_junit_is_deterministic_and_written_atomically(tmp_path: Path) -> None:
    new, old = baseline_pair()
    gate = bars(recall_at_1=">= 0.9")
    first = render_junit(evaluate_gate(new, gate, baseline=old))
    new_again, old_again = baseline_pair()  # evaluated afresh
    again = render_junit(evaluate_gate(new_again, gate, baseline=old_again))
    assert first == again  # equal inputs, equal bytes: no timestamps, no timings
    assert first.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n<testsuites")
    out = tmp_path / "out"
    write_junit(evaluate_gate(new, gate, baseline=old), out / "a.xml")
    write_junit(evaluate_gate(new, gate, baseline=old), out / "a.xml")  # replaces
    assert [p.name for p in out.iterdir()] == ["a.xml"]  # no temporary file left behind
    assert (out / "a.xml").read_bytes() == first


# --- the command line ----------------------------------------------------------------------


def write_run(run: RunResult, tmp_path: Path) -> Path:
    return run.write(tmp_path / "runs" / run.run_id)


def gate_config(tmp_path: Path, gate: str) -> Path:
    """A config holding only a `gate:` mapping (its other paths are never read by the gate)."""
    path = tmp_path / "gate.yaml"
    path.write_text("questions_path: q.jsonl\ngold_evidence_path: g.jsonl\n"
                    "chunks_path: c.jsonl\npredictions_path: p.jsonl\n" + gate, encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def test_cli_gate_exit_codes_and_lines(tmp_path: Path) -> None:
    run_dir = write_run(make_run("r1", FIVE), tmp_path)
    ok = invoke("gate", run_dir, "--bar", "recall_at_1>=0.8", "--bar", "correct <= 1")
    assert ok.exit_code == 0, ok.output
    assert "ok   recall_at_1 >= 0.8: got 0.800" in ok.output
    assert "gate passed for run r1: 2 bars ok" in ok.output
    failed = invoke("gate", run_dir, "--bar", "recall_at_1>0.8")
    assert failed.exit_code == 1, failed.output
    assert "FAIL recall_at_1 > 0.8: got 0.800" in failed.output
    bad = invoke("gate", run_dir, "--bar", "recal_at_1>=0.8")
    assert bad.exit_code == 2 and "did you mean recall_at_1" in bad.output
    nothing = invoke("gate", run_dir)  # an API run has no config to take the bars from
    assert nothing.exit_code == 2 and "no bars: pass --bar or --config" in nothing.output


def test_cli_gate_missing_predictions_fail(tmp_path: Path) -> None:
    run_dir = write_run(make_run("r1", [*FIVE, Q("q6", predicted=False)]), tmp_path)
    result = invoke("gate", run_dir, "--bar", "recall_at_2>=0.5")
    assert result.exit_code == 1, result.output
    assert "FAIL not measured: q6" in result.output
    assert "1 question not measured (allowed: 0)" in result.output


def test_cli_gate_allow_missing_from_the_config(tmp_path: Path) -> None:
    run_dir = write_run(make_run("r1", [*FIVE, Q("q6", predicted=False)]), tmp_path)
    cfg = gate_config(tmp_path, 'gate:\n  recall_at_2: ">= 0.5"\n  allow_missing: 1\n')
    result = invoke("gate", run_dir, "--config", cfg)
    assert result.exit_code == 0, result.output
    assert "note not measured: q6" in result.output


def test_cli_gate_strict_from_the_config_and_junit(tmp_path: Path) -> None:
    run_dir = write_run(make_run("r1", FIVE), tmp_path)
    flips = gate_config(tmp_path, 'gate:\n  recall_at_1: ">= 0.5"\n')
    report = tmp_path / "junit.xml"
    passed = invoke("gate", run_dir, "--config", flips, "--junit", report)
    assert passed.exit_code == 0, passed.output
    root = ET.parse(report).getroot()
    assert root.get("failures") == "0" and root.findall("testsuite")[1].get("tests") == "5"

    strict = gate_config(tmp_path, 'gate:\n  recall_at_1: ">= 0.5"\n  junit_questions: strict\n')
    failed = invoke("gate", run_dir, "--config", strict, "--junit", report)
    assert failed.exit_code == 1, failed.output
    assert "FAIL failing questions (strict): q3, q5" in failed.output
    assert ET.parse(report).getroot().get("failures") == "2"

    typo = gate_config(tmp_path, 'gate:\n  junit_questions: all\n')
    bad = invoke("gate", run_dir, "--config", typo)
    assert bad.exit_code == 2 and "gate.junit_questions" in bad.output


def test_cli_gate_with_a_baseline(tmp_path: Path) -> None:
    new, old = baseline_pair()
    new_dir, old_dir = write_run(new, tmp_path), write_run(old, tmp_path)
    report = tmp_path / "junit.xml"
    result = invoke("gate", new_dir, "--baseline", old_dir, "--bar", "recall_at_2>=0.5",
                    "--junit", report)
    assert result.exit_code == 1, result.output
    assert "REGRESSION q2: found pass→fail" in result.output
    assert ET.parse(report).getroot().get("failures") == "4"  # the regression case + 3 flips
    # the record read back from the folders gives the same JUnit as the one in memory
    assert report.read_bytes() == render_junit(evaluate_gate(
        read_run_folder(new_dir), bars(recall_at_2=">= 0.5"), baseline=read_run_folder(old_dir)))
    lenient = invoke("gate", new_dir, "--baseline", old_dir, "--bar", "recall_at_2>=0.5",
                     "--no-fail-on-regression")
    assert lenient.exit_code == 0, lenient.output
    only_baseline = invoke("gate", new_dir, "--baseline", old_dir)
    assert only_baseline.exit_code == 2 and "no bars" in only_baseline.output


def test_cli_gate_a_baseline_at_another_k(tmp_path: Path) -> None:
    new_dir = write_run(make_run("new", [Q("q1", rank=2)]), tmp_path)
    stored = write_run(make_run("k2", [Q("q1", rank=2)], k=2), tmp_path)
    result = invoke("gate", new_dir, "--baseline", stored, "--bar", "recall_at_2>=0.5")
    assert result.exit_code == 0, result.output  # both fail found at k=1: no flip
    assert "0 regressions, 0 fixes vs baseline k2" in result.output
    lacking = write_run(make_run("k2-only", [Q("q1")], k=2, retrieval=["recall_at_2"]), tmp_path)
    result = invoke("gate", new_dir, "--baseline", lacking, "--bar", "recall_at_2>=0.5")
    assert result.exit_code == 2, result.output
    assert "metrics.json" in result.output and "checks.k" in result.output
    assert "rerun it with --k 1" in result.output


def rewrite(path: Path, edit: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(edit(json.loads(path.read_text(encoding="utf-8")))),
                    encoding="utf-8")


@pytest.mark.parametrize(("edit", "field"), [
    (lambda m: {k: v for k, v in m.items() if k != "provenance"}, "provenance"),
    (lambda m: {k: v for k, v in m.items() if k != "checks"}, "checks"),
    (lambda m: {**m, "retrieval": {"recall_at_1": 0.8}}, "retrieval.recall_at_1"),
    (lambda m: {**m, "answer": {"correct": {**m["answer"]["correct"], "mean": "high"}}},
     "answer.correct.mean"),
    (lambda m: {**m, "schema_version": 2}, "schema_version"),
])
def test_cli_gate_on_a_malformed_metrics_json(tmp_path: Path, edit: Callable[[Any], Any],
                                              field: str) -> None:
    run_dir = write_run(make_run("r1", FIVE), tmp_path)
    rewrite(run_dir / "metrics.json", edit)
    result = invoke("gate", run_dir, "--bar", "recall_at_1>=0.5")
    assert result.exit_code == 2, result.output
    assert f"{run_dir / 'metrics.json'}: field '{field}'" in result.output
    with pytest.raises(InputError) as info:
        read_run_folder(run_dir)
    assert (info.value.path, info.value.field) == (str(run_dir / "metrics.json"), field)


def test_cli_gate_on_malformed_rows_names_file_and_line(tmp_path: Path) -> None:
    run_dir = write_run(make_run("r1", FIVE), tmp_path)
    answers = run_dir / "answers.jsonl"
    lines = answers.read_text(encoding="utf-8").splitlines(keepends=True)
    answers.write_text(lines[0] + "{oops\n" + "".join(lines[2:]), encoding="utf-8")
    result = invoke("gate", run_dir, "--bar", "recall_at_1>=0.5")
    assert result.exit_code == 2, result.output
    assert f"{answers}:2: malformed JSON" in result.output

    row = json.loads(lines[2])
    answers.write_text(lines[0] + lines[1] + json.dumps({**row, "answerable": "maybe"}) + "\n"
                       + "".join(lines[3:]), encoding="utf-8")
    result = invoke("gate", run_dir, "--bar", "recall_at_1>=0.5")
    assert result.exit_code == 2 and f"{answers}:3: field 'answerable'" in result.output

    answers.write_text("".join(lines) + lines[0], encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_run_folder(run_dir)
    assert (info.value.line, info.value.field) == (6, "question_id")
    assert "duplicate question_id 'q1' (first on line 1)" in info.value.message

    answers.write_text("".join(lines), encoding="utf-8")
    (run_dir / "retrieved_chunks.jsonl").unlink()
    result = invoke("gate", run_dir, "--bar", "recall_at_1>=0.5")
    assert result.exit_code == 2
    assert f"{run_dir / 'retrieved_chunks.jsonl'}: file not found" in result.output
    missing = invoke("gate", tmp_path / "nope", "--bar", "recall_at_1>=0.5")
    assert missing.exit_code == 2 and "metrics.json: file not found" in missing.output


def test_cli_run_with_gate_fails_on_missing_predictions(tmp_path: Path) -> None:
    specs = [*FIVE, Q("q6", predicted=False)]
    data = tmp_path / "data"
    data.mkdir()
    files: dict[str, list[Any]] = {
        "questions.jsonl": [s.question() for s in specs],
        "gold.jsonl": [g for s in specs for g in s.gold()],
        "chunks.jsonl": [*FILLERS, *(c for s in specs for c in s.chunks())],
        "predictions.jsonl": [s.prediction() for s in specs if s.predicted],
    }
    for name, records in files.items():
        (data / name).write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n"
                                         for r in records), encoding="utf-8")
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(
        "questions_path: data/questions.jsonl\ngold_evidence_path: data/gold.jsonl\n"
        "chunks_path: data/chunks.jsonl\npredictions_path: data/predictions.jsonl\n"
        "output_root: runs\npipeline:\n  top_k: 1\n"
        "metrics:\n  retrieval: [recall_at_1, hit_at_1]\n  answer: [groundedness, correct]\n"
        "  bootstrap_resamples: 100\ngate:\n  recall_at_1: \">= 0.5\"\n", encoding="utf-8")
    result = invoke("run", "-c", cfg, "--run-id", "byo", "-q", "--gate")
    assert result.exit_code == 1, result.output
    assert "FAIL not measured: q6" in result.output
    assert "gate FAILED for run byo: 1 bar ok; 1 question not measured (allowed: 0)" in (
        result.output)
    # the run folder names its config: `ragassay gate RUN` takes the bars from it
    again = invoke("gate", tmp_path / "runs" / "byo")
    assert again.exit_code == 1 and "ok   recall_at_1 >= 0.5: got 0.800" in again.output


# --- a real run of the shipped fixture ----------------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ragassay.config import load_config
    from ragassay.run import run_evaluation

    out = tmp_path_factory.mktemp("runs")
    result = run_evaluation(load_config(ROOT / "configs/eval/rag_quality_v1.yaml"),
                            run_id="gate", output_root=out)
    assert result.folder is not None
    return result.folder


def test_gate_on_a_real_run(real_run: Path, tmp_path: Path) -> None:
    run = read_run_folder(real_run)
    assert run.questions and run.metrics.counts.without_prediction == 0
    recall = run.metrics.retrieval["recall_at_5"].mean
    gate = parse_gate({"recall_at_5": f">= {recall!r}", "correct": "> 1"}, source="config",
                      known_metrics=list(run.metrics.means()))
    result = evaluate_gate(run, gate, baseline=run)
    assert [r.passed for r in result.bars] == [True, False]  # at the boundary; above the maximum
    assert not result.passed and result.regressions == [] and result.fixes == []
    assert result.found == f"hit_at_{run.totals.k} (hit policy {run.totals.hit_policy})"
    assert format_result(result)[1].startswith("FAIL correct > 1: got ")

    root = junit(result, tmp_path)
    questions = root.findall("testsuite")[1]
    assert questions.get("tests") == str(run.metrics.counts.questions) == str(len(run.questions))
    assert questions.get("failures") == "0"  # no flips against itself
    strict = evaluate_gate(run, GateConfig(gate, junit_questions="strict"), baseline=run)
    failing = len(strict.failing_questions)
    assert failing == sum(1 for q in run.questions if q.measured and not q.checks.passed)
    strict_questions = ET.fromstring(render_junit(strict)).findall("testsuite")[1]
    assert strict_questions.get("failures") == str(failing)
    assert render_junit(result) == render_junit(evaluate_gate(read_run_folder(real_run), gate,
                                                              baseline=read_run_folder(real_run)))
    cli = invoke("gate", real_run, "--baseline", real_run, "--bar", f"recall_at_5>={recall!r}")
    assert cli.exit_code == 0, cli.output


# --- use: ppi -------------------------------------------------------------------------------


def with_corrected(run: RunResult, measure: str, mean: float, low: float, high: float
                   ) -> RunResult:
    corrected = {measure: {"mean": mean, "ci_low": low, "ci_high": high}}
    return RunResult(run.metrics.model_copy(update={"corrected": corrected}), run.questions)


def test_use_ppi_checks_the_corrected_mean() -> None:
    run = make_run("r1", FIVE)  # correct: mean 0.8 by the run
    options = parse_gate_config({"correct": ">= 0.75", "use": "ppi"}, source="c.yaml",
                                known_metrics=KNOWN)
    assert options.use == "ppi"
    plain = evaluate_gate(run, parse_gate_config({"correct": ">= 0.75"}, source="c.yaml",
                                                 known_metrics=KNOWN))
    assert plain.passed
    corrected = evaluate_gate(with_corrected(run, "correct", 0.70, 0.62, 0.78), options)
    r = corrected.bars[0]
    assert (r.passed, r.value, r.noise) == (False, 0.70, pytest.approx(0.08))
    assert r.reason == "corrected (PPI++) 0.700 [0.620, 0.780]"
    with pytest.raises(InputError, match="gate.use"):
        parse_gate_config({"use": "median"}, source="c.yaml", known_metrics=KNOWN)


def test_use_ppi_a_change_within_the_judge_noise_is_no_change() -> None:
    options = parse_gate_config({"correct": ">= 0.75", "use": "ppi"}, source="c.yaml",
                                known_metrics=KNOWN)
    base = with_corrected(make_run("base", FIVE), "correct", 0.76, 0.70, 0.82)
    # 0.76 → 0.72: below the bar, but |Δ| 0.04 is within the noise (half-width 0.06)
    small = with_corrected(make_run("r1", FIVE), "correct", 0.72, 0.66, 0.78)
    r = evaluate_gate(small, options, baseline=base).bars[0]
    assert r.passed and r.reason.endswith("no change: |Δ| 0.040 ≤ judge noise 0.060")
    # 0.76 → 0.60: a real drop
    big = with_corrected(make_run("r2", FIVE), "correct", 0.60, 0.54, 0.66)
    assert not evaluate_gate(big, options, baseline=base).bars[0].passed
