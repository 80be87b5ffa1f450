"""Per-question answer metrics, worked by hand on a four-chunk corpus (ko, de, en)."""

from __future__ import annotations

from typing import Any

import pytest

from ragassay.metrics.answer import (
    DEFAULT_DECLINE_PHRASES,
    AnswerScores,
    cited_chunk_ids,
    is_declined,
    score_answer,
    strip_markers,
    unknown_citations,
)
from ragassay.schema import Answer, Citation, Question

CHUNKS = {
    "rfp::chunk-001": "하자보수 기간은 검수 완료일로부터 12개월로 한다.",
    "rfp::chunk-002": "장애 발생 시 24시간 이내에 조치하여야 한다.",
    "shop::chunk-001": "Der Versand kostet 5 €. Die Lieferung dauert 3 Werktage.",
    "manual::chunk-001": "The warranty lasts 2 years from the date of purchase.",
}
CONTEXT = ["rfp::chunk-001", "rfp::chunk-002", "shop::chunk-001"]  # manual is not retrieved


def question(answerable: bool = True, **kw: Any) -> Question:
    return Question(question_id="q1", question="하자보수 기간은?", answerable=answerable, **kw)


def answer(text: str, *cited: str, status: str = "supported") -> Answer:
    return Answer(text=text, status=status, citations=[Citation(chunk_id=c) for c in cited])


def score(q: Question, a: Answer, gold: tuple[str, ...] = ("rfp::chunk-001",),
          **kw: Any) -> AnswerScores:
    return score_answer(q, a, context_ids=CONTEXT, gold_ids=gold, chunk_texts=CHUNKS, **kw)


# --- citations ------------------------------------------------------------------------


def test_citations_and_inline_markers_in_order_without_duplicates() -> None:
    a = answer("12개월 [rfp::chunk-002] 입니다 [rfp::chunk-001, rfp::chunk-002] [1] [sic]",
               "rfp::chunk-001", "ghost::chunk-009")
    assert cited_chunk_ids(a, CHUNKS.keys()) == [
        "rfp::chunk-001", "ghost::chunk-009", "rfp::chunk-002",
    ]
    assert unknown_citations(a, CHUNKS.keys()) == ["ghost::chunk-009"]
    assert unknown_citations(answer("siehe [shop::chunk-404]"), CHUNKS.keys()) == [
        "shop::chunk-404",
    ]


def test_strip_markers_puts_each_marker_on_a_line_break() -> None:
    assert strip_markers("A [x::chunk-001] 2. B [y]") == "A \n 2. B \n"


# --- groundedness: one example per reason, in the documented order ---------------------


def test_grounded_answer() -> None:
    s = score(question(), answer("하자보수 기간은 12개월입니다.", "rfp::chunk-001"))
    assert (s.groundedness, s.groundedness_reason) == (1, "")
    assert (s.faithfulness, s.unsupported_numbers) == (1, [])


def test_declined_answer_is_grounded() -> None:
    s = score(question(), answer("제공된 문서에서 답을 찾을 수 없습니다.", status="insufficient"))
    assert (s.declined, s.groundedness, s.groundedness_reason) == (True, 1, "")
    assert s.faithfulness == 1  # declined, cites nothing


def test_no_citation_is_no_source() -> None:
    s = score(question(), answer("하자보수 기간은 12개월입니다."))
    assert (s.groundedness, s.groundedness_reason) == (0, "no source")
    assert s.faithfulness == 0  # claims without a source


def test_citation_outside_the_context() -> None:
    s = score(question(), answer("The warranty lasts 2 years.",
                                 "rfp::chunk-001", "manual::chunk-001", "ghost::chunk-009"))
    assert s.groundedness == 0
    assert s.groundedness_reason == "source not in context: manual::chunk-001"  # the first
    assert s.faithfulness == 0
    assert s.unknown_citations == ["ghost::chunk-009"]


def test_number_not_in_the_cited_source() -> None:
    text = "하자보수 기간은 18개월이며 36시간 이내 조치한다."
    s = score(question(), answer(text, "rfp::chunk-001"))
    assert (s.groundedness, s.groundedness_reason) == (0, "number 18개월 not in source")
    assert s.unsupported_numbers == ["18개월", "36시간"]
    assert s.faithfulness == 1  # the citation itself is fine


def test_numbers_are_checked_against_cited_chunks_only() -> None:
    # 24시간 is in rfp::chunk-002 (in the context) but the answer cites only chunk-001
    s = score(question(), answer("장애 시 24시간 이내 조치 [rfp::chunk-001]"))
    assert s.groundedness_reason == "number 24시간 not in source"
    s = score(question(), answer("장애 시 24시간 이내 조치 [rfp::chunk-002]"))
    assert (s.groundedness, s.cited_ids) == (1, ["rfp::chunk-002"])


def test_unit_mismatch_fails_groundedness() -> None:
    s = score(question(), answer("Die Lieferung dauert 5 Tage.", "shop::chunk-001"))
    assert s.groundedness_reason == "number 5 Tage not in source"  # the source has 5 €
    s = score(question(), answer("Der Versand kostet 5 Euro.", "shop::chunk-001"))
    assert s.groundedness == 1


def test_number_normalisation_in_groundedness() -> None:
    chunks = {"c::chunk-001": "가용성 99.5퍼센트, 예산 3,000만원, Gebühr 1.000,50 €, 5 Werktage"}
    for text in ["99.5% [c::chunk-001]", "3천만원 [c::chunk-001]", "1000,50 EUR [c::chunk-001]",
                 "fünf Werktage [c::chunk-001]", "5 business days [c::chunk-001]"]:
        s = score_answer(question(), answer(text), context_ids=["c::chunk-001"], gold_ids=[],
                         chunk_texts=chunks)
        assert (text, s.groundedness) == (text, 1)


def test_inline_markers_and_ids_are_not_numbers() -> None:
    s = score(question(), answer("요구사항 SFR-003: 12개월 [rfp::chunk-001] [2]"))
    assert (s.groundedness, s.unsupported_numbers) == (1, [])


# --- decline --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["제공된 문서에서 답을 찾을 수 없습니다.", "해당 내용은 알 수 없습니다.",
     "Die bereitgestellten Dokumente beantworten diese Frage nicht.", "Ich weiß es nicht.",
     "I don’t know.", "This is not answered by the provided documents."],
)
def test_decline_phrases_decline_a_supported_answer(text: str) -> None:
    assert is_declined(answer(text))
    s = score(question(), answer(text))
    assert (s.declined, s.groundedness, s.correct) == (True, 1, None)


def test_decline_by_status_and_custom_phrases() -> None:
    assert is_declined(answer("", status="abstained"))
    assert not is_declined(answer("Es werden keine Informationen weitergegeben."))
    s = score(question(), answer("Keine Ahnung."), decline_phrases=["keine ahnung"])
    assert s.declined
    assert "I don't know" in DEFAULT_DECLINE_PHRASES


# --- relevancy, correctness -----------------------------------------------------------


def test_answer_relevancy_is_the_share_of_expected_terms() -> None:
    q = question(expected_terms=["하자보수", "12개월", "검수"])
    s = score(q, answer("하자보수 기간은 １２개월 [rfp::chunk-001]"))
    assert s.answer_relevancy == pytest.approx(2 / 3)
    assert score(question(), answer("x")).answer_relevancy is None


def test_correct_for_answerable_questions() -> None:
    q = question(must_contain=["12개월", "검수 완료일"])
    full = score(q, answer("검수 완료일로부터 12개월 [rfp::chunk-001]"))
    assert (full.correct, full.must_contain_found) == (1, ["12개월", "검수 완료일"])
    partial = score(q, answer("12개월입니다 [rfp::chunk-001]"))
    assert (partial.correct, partial.must_contain_found) == (0, ["12개월"])
    declined = score(q, answer("12개월인지 알 수 없습니다."))
    assert (declined.correct, declined.must_contain_found) == (0, ["12개월"])
    assert score(question(), answer("12개월 [rfp::chunk-001]")).correct is None


def test_correct_and_detection_for_unanswerable_questions() -> None:
    q = question(answerable=False)
    declined = score(q, answer("The provided documents do not answer this question."), gold=())
    assert (declined.correct, declined.unanswerable_detection_flag) == (1, 1)
    assert declined.hallucination_flag == 0
    answered = score(q, answer("The warranty lasts 2 years [manual::chunk-001]"), gold=())
    assert (answered.correct, answered.unanswerable_detection_flag) == (0, 0)
    assert answered.hallucination_flag == 1
    assert score(question(), answer("x")).unanswerable_detection_flag is None


# --- citation accuracy and hallucination ----------------------------------------------


def test_citation_accuracy_is_the_share_of_cited_gold() -> None:
    s = score(question(), answer("12개월, 24시간", "rfp::chunk-001", "rfp::chunk-002"))
    assert s.citation_accuracy == 1 / 2
    assert score(question(), answer("12개월")).citation_accuracy is None  # nothing cited
    assert score(question(), answer("12개월", "rfp::chunk-001"), gold=()).citation_accuracy is None


def test_hallucination_flag_on_answerable_questions() -> None:
    only_non_gold = score(question(), answer("24시간 [rfp::chunk-002]"))
    assert only_non_gold.hallucination_flag == 1
    some_gold = score(question(), answer("12개월", "rfp::chunk-001", "rfp::chunk-002"))
    assert some_gold.hallucination_flag == 0
    assert score(question(), answer("12개월")).hallucination_flag == 0  # cites nothing
    # without gold (e.g. a label that could not be placed) it cannot be judged: not 0
    assert score(question(), answer("24시간 [rfp::chunk-002]"), gold=()).hallucination_flag is None
    declined = score(question(), answer("알 수 없습니다 [rfp::chunk-002]"))
    assert declined.hallucination_flag == 0


def test_to_dict_has_every_field_in_order() -> None:
    d = score(question(), answer("12개월 [rfp::chunk-001]")).to_dict()
    assert list(d) == [
        "cited_ids", "unknown_citations", "declined", "faithfulness", "groundedness",
        "groundedness_reason", "answer_relevancy", "correct", "must_contain_found",
        "citation_accuracy", "hallucination_flag", "unanswerable_detection_flag",
        "unsupported_numbers",
    ]


# --- the text without its markers, and must_contain alternatives -----------------------

PARIS = {"paris-p001::chunk-001": "Paris is the capital of France. The city has many museums."}


def test_a_chunk_id_in_a_marker_is_not_what_the_answer_says() -> None:
    # The slug names Paris, the answer names nobody: not right, not relevant.
    q = Question(question_id="q1", question="What is the capital of France?", answerable=True,
                 must_contain=["Paris"], expected_terms=["paris"])
    a = Answer(text="The city has many museums. [paris-p001::chunk-001]", status="supported")
    s = score_answer(q, a, context_ids=list(PARIS), gold_ids=list(PARIS), chunk_texts=PARIS)
    assert (s.correct, s.must_contain_found, s.answer_relevancy) == (0, [], 0.0)
    assert s.cited_ids == ["paris-p001::chunk-001"]  # still read as a citation
    named = Answer(text="Paris. [paris-p001::chunk-001]", status="supported")
    s = score_answer(q, named, context_ids=list(PARIS), gold_ids=list(PARIS), chunk_texts=PARIS)
    assert (s.correct, s.answer_relevancy) == (1, 1.0)


def test_a_decline_phrase_inside_a_marker_is_no_decline() -> None:
    assert not is_declined(answer("12개월 [I don't know]"))
    assert is_declined(answer("I don't know [rfp::chunk-001]"))


def test_a_must_contain_item_of_alternatives_is_held_by_any_one() -> None:
    # Three annotators' answers to "Who won?": the answer holds the second one only.
    q = question(must_contain=[["Denver Broncos", "the Broncos", "Denver"], "24"])
    s = score(q, answer("The Broncos won 24 to 10. [rfp::chunk-001]"))
    assert (s.correct, s.must_contain_found) == (1, [["Denver Broncos", "the Broncos",
                                                      "Denver"], "24"])
    s = score(q, answer("The Panthers won 24 to 10. [rfp::chunk-001]"))
    assert (s.correct, s.must_contain_found) == (0, ["24"])
    with pytest.raises(ValueError):  # an item without alternatives could never be held
        question(must_contain=[[]])
