"""Why a metric was not measured for a question: the reasons, and which are failures.

Every None a question's metrics hold has a reason (``QuestionResult.missing``); the run counts
them per aggregate. Reasons in :data:`NOT_APPLICABLE` are fields the data set does not have,
reported once per run; ``NO_GOLD`` is the gold file's failure (its own label); the others are
what the system's output prevented (``evaluation_failure.metric_missing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .config import EvalConfig
from .schema import Question

# Why a metric was not measured for a question. Those in NOT_APPLICABLE are fields the data
# set does not have (reported once per run); the others are failures of the gold or of the
# system's output.
UNANSWERABLE = "unanswerable question (no gold)"
ANSWERABLE = "answerable question"
NO_TERMS = "question has no expected_terms"
NO_MUST = "question has no must_contain"
DECLINED = "declined without a citation"
NO_GOLD = "no usable gold evidence"
NOT_CITED = "the answer cites no chunk"
NO_PREDICTION = "no prediction for this question"
NO_JUDGE = "no judge configured"
NOT_APPLICABLE = frozenset({UNANSWERABLE, ANSWERABLE, NO_TERMS, NO_MUST, DECLINED, NO_JUDGE})


def missing_reasons(q: Question, retrieval: Mapping[str, Any], scores: Mapping[str, Any]
             ) -> dict[str, str]:
    """Why each metric that is None for this question was not measured."""
    no_gold = UNANSWERABLE if not q.answerable else NO_GOLD
    out = {name: no_gold for name, v in retrieval.items() if v is None}
    why = {
        "answer_relevancy": NO_TERMS,
        "correct": NO_MUST,
        "citation_accuracy": (no_gold if retrieval.get("rank") is None
                              else DECLINED if scores.get("declined") else NOT_CITED),
        "hallucination_flag": NO_GOLD,
        "unanswerable_detection_flag": ANSWERABLE,
    }
    out.update({name: reason for name, reason in why.items() if scores.get(name) is None})
    if "judge_faithfulness" not in scores:  # set by the judge, when one is configured
        out["judge_faithfulness"] = NO_JUDGE
    return out


def asked_and_prevented(cfg: EvalConfig, missing: dict[str, str]) -> dict[str, str]:
    """The metrics the config asks for that the system's output kept from being measured."""
    asked = {*cfg.metrics.retrieval, *cfg.metrics.answer}
    return {m: r for m, r in missing.items()
            if m in asked and r not in NOT_APPLICABLE and r != NO_GOLD}
