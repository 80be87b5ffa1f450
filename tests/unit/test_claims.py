"""Claims: the ko/de/en splitter, the deterministic checks (numbers with units and dates,
negation, named terms), verdicts against cited / context / gold, and the claim measures —
all hand-worked."""

from __future__ import annotations

from typing import Any

import pytest

from ragassay.checks import question_checks
from ragassay.claims.deterministic import decide, named_terms, negated
from ragassay.claims.split import split_claims
from ragassay.claims.verify import Source, check_answer

SRC = ["The warranty period is 24 months from acceptance. Siemens supplies the pumps.",
       "Shipping costs 4.90 euros. Orders over 50 euros ship free."]


# --- the splitter ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "claims"), [
    ("The warranty is 24 months [rfp::chunk-001], and shipping costs 4.90 euros.",
     ["The warranty is 24 months", "shipping costs 4.90 euros."]),
    ("Red, and blue.", ["Red, and blue."]),  # three words a side at least
    ("Die Garantie beträgt 24 Monate, aber der Versand kostet 4,90 Euro. Z.B. gilt das.",
     ["Die Garantie beträgt 24 Monate", "der Versand kostet 4,90 Euro.", "Z.B. gilt das."]),
    ("보증 기간은 24개월이고, 배송비는 4,900원입니다.",
     ["보증 기간은 24개월이고", "배송비는 4,900원입니다."]),
    ("Price: 3.5 %; delivery in 5 days.", ["Price: 3.5 %", "delivery in 5 days."]),
    ("[faq::chunk-002]", []),
    ("", []),
])
def test_split_claims(text: str, claims: list[str]) -> None:
    assert split_claims(text) == claims


# --- the deterministic checks ------------------------------------------------------------


@pytest.mark.parametrize(("claim", "verdict", "check"), [
    ("The warranty period is 24 months.", "entailed", "numbers"),
    ("The warranty period is 12 months.", "contradicted", "numbers"),  # changed number
    ("The warranty period is not 24 months.", "contradicted", "negation"),
    ("Bosch supplies the pumps.", "contradicted", "terms"),  # swapped entity
    ("Siemens supplies the pumps.", "entailed", "overlap"),
    ("Delivery takes 5 days.", "unsupported", "numbers"),  # a number no source holds
])
def test_decide_english(claim: str, verdict: str, check: str) -> None:
    d = decide(claim, SRC)
    assert d is not None and (d.verdict, d.check) == (verdict, check)


def test_the_evidence_is_the_deciding_source_sentence() -> None:
    d = decide("The warranty period is 12 months.", SRC)
    assert d is not None
    assert d.evidence == "The warranty period is 24 months from acceptance."
    assert d.reason == "'12 months' where the source says '24 months'"


@pytest.mark.parametrize(("claim", "verdict", "check"), [
    ("보증 기간은 24개월입니다.", "entailed", "numbers"),
    ("보증 기간은 12개월입니다.", "contradicted", "numbers"),
    ("보증 기간은 24개월이 아니다.", "contradicted", "negation"),
    ("Die Gewährleistung beträgt 24 Monate.", "entailed", "numbers"),
    ("Die Gewährleistung beträgt nicht 24 Monate.", "contradicted", "negation"),
    ("Die Gewährleistung beträgt 36 Monate.", "contradicted", "numbers"),
    ("Die Abnahme erfolgt am 1. Juli 2026.", "contradicted", "numbers"),  # another date
])
def test_decide_korean_and_german(claim: str, verdict: str, check: str) -> None:
    sources = ["보증 기간은 검수 완료일로부터 24개월이다.",
               "Die Gewährleistung beträgt 24 Monate. Die Abnahme erfolgt am 1. Juni 2026."]
    d = decide(claim, sources)
    assert d is not None and (d.verdict, d.check) == (verdict, check)


def test_what_the_checks_leave_to_the_judge() -> None:
    assert decide("Orders over 50 euros ship free of charge.", SRC) is None  # paraphrase
    assert decide("Anything.", []) is not None  # no source at all: unsupported


def test_negation_and_named_terms() -> None:
    assert negated("Das ist nicht so.") and negated("It isn't.") and negated("하지 않는다")
    assert not negated("It is so.") and not negated("Knoten sind da.")
    assert named_terms("Pumps come from Siemens and SFR-003 applies.") == {"siemens",
                                                                            "sfr-003"}
    assert named_terms("Der Versand kostet Geld.") == set()  # German nouns are no names
    assert named_terms("제품은 Siemens 가 공급한다.") == {"siemens"}


# --- verdicts and measures ----------------------------------------------------------------


def test_check_answer_hand_worked() -> None:
    cited = [Source(SRC[0], "rfp::1")]
    context = [Source(SRC[0], "rfp::1"), Source(SRC[1], "faq::2"),
               Source("The warranty period is 36 months.", "old::9")]
    gold = [Source(SRC[0], "rfp::1", gold=True),
            Source("The warranty period is 24 months.", gold=True)]
    answer = ("The warranty period is 24 months [rfp::1]. Shipping costs 4.90 euros. "
              "The warranty period is 36 months.")
    rep = check_answer(answer, declined=False, question="Warranty?", cited=cited,
                       context=context, gold=gold)
    verdicts = [(c["cited"]["verdict"], c["context"]["verdict"], c["gold"]["verdict"])
                for c in rep.claims]
    assert verdicts == [("entailed", "entailed", "entailed"),
                        ("unsupported", "entailed", "unsupported"),
                        ("contradicted", "entailed", "contradicted")]
    assert [c["context"]["chunk"] for c in rep.claims] == ["rfp::1", "faq::2", "old::9"]
    assert rep.measures == {
        "claim_precision": 1 / 3,  # one of three claims entailed by the cited chunk
        "claim_recall": 1.0,  # the one gold claim is stated
        "context_utilisation": 1.0,  # each of the three chunks holds an entailed claim's evidence
        "noise_sensitivity": 1 / 3,  # claim 3: from a non-gold chunk, contradicted by the gold
    }
    assert rep.to_dict()["decided_without_judge"] == 3


def test_undecided_claims_go_to_the_judge_and_record_it() -> None:
    asked: list[tuple[str, Any]] = []

    def judge(claim: str, sources: Any, question: Any) -> dict[str, Any]:
        asked.append((claim, question))
        return {"label": "entailed", "evidence": "Orders over 50 euros ship free."}

    rep = check_answer("Orders over 50 euros ship free of charge.", declined=False,
                       question="Shipping?", cited=[Source(SRC[1], "faq::2")], context=[],
                       gold=[], judge=judge)
    v = rep.claims[0]["cited"]
    assert (v["verdict"], v["decided_by"], v["chunk"]) == ("entailed", "judge", "faq::2")
    assert asked == [("Orders over 50 euros ship free of charge.", "Shipping?")]
    assert rep.measures["claim_precision"] == 1.0
    assert rep.measures["noise_sensitivity"] is None and "no gold text" in rep.missing[
        "noise_sensitivity"]


def test_without_a_judge_an_undecided_claim_stays_undecided() -> None:
    rep = check_answer("Orders over 50 euros ship free of charge.", declined=False,
                       question=None, cited=[Source(SRC[1], "faq::2")], context=[], gold=[])
    assert rep.claims[0]["cited"]["verdict"] is None
    assert rep.claims[0]["cited"]["decided_by"] == "none"
    assert rep.measures["claim_precision"] is None


def test_a_declined_answer_claims_nothing() -> None:
    rep = check_answer("Not in the sources.", declined=True, question=None, cited=[],
                       context=[], gold=[])
    assert rep.claims == [] and set(rep.measures.values()) == {None}


def test_right_may_use_claim_recall_where_there_is_no_must_contain() -> None:
    scores = {"correct": None, "groundedness": 1, "claim_recall": 0.5}
    assert question_checks(answerable=True, retrieval={}, scores=scores, k=3).right is None
    assert question_checks(answerable=True, retrieval={}, scores=scores, k=3,
                           right_by_claim_recall=0.5).right is True
    assert question_checks(answerable=True, retrieval={}, scores=scores, k=3,
                           right_by_claim_recall=0.8).right is False
    with_must = {**scores, "correct": 0}
    assert question_checks(answerable=True, retrieval={}, scores=with_must, k=3,
                           right_by_claim_recall=0.5).right is False  # must_contain rules
