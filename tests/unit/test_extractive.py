"""The naive extractive answerer: picks supported sentences, cites them, declines otherwise."""

from __future__ import annotations

import pytest

from ragassay.answer.extractive import (
    DECLINE_TEXT,
    Answerer,
    ExtractiveAnswerer,
    sentence_support,
)
from ragassay.metrics.answer import is_declined
from ragassay.schema import Answer, Chunk


def chunk(cid: str, text: str, pages: tuple[int, int] | None = None) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=cid.split("::")[0], text=text, page_span=pages)


RFP = [
    chunk("rfp::chunk-001", "본 사업은 차세대 시스템 구축 사업이다. "
          "사업 기간은 계약일로부터 12개월이다.", (1, 1)),
    chunk("rfp::chunk-002", "하자보수 기간은 검수 완료일로부터 12개월로 한다. "
          "장애 발생 시 24시간 이내에 조치하여야 한다.", (3, 4)),
    chunk("rfp::chunk-003", "- 무상 유지보수는 6개월간 제공한다.\n"
          "- 가용성은 99.5% 이상이어야 한다."),
]
SHOP = [
    chunk("faq::chunk-001", "Der Versand kostet 4,90 €. Ab 50 € ist der Versand kostenlos."),
    chunk("faq::chunk-002", "Die Lieferung dauert 2 bis 3 Werktage. Rücksendungen sind "
          "30 Tage lang kostenlos."),
]


def test_is_an_answerer() -> None:
    answerer: Answerer = ExtractiveAnswerer()
    assert isinstance(answerer.answer("x", []), Answer)


def test_sentence_support_is_the_share_of_question_words() -> None:
    # question words: 하자보수, 기간 → both in the sentence
    assert sentence_support(["하자보수", "기간"], "하자보수 기간은 12개월로 한다.") == 2 / 2
    assert sentence_support(["하자보수", "기간"], "사업 기간은 12개월이다.") == 1 / 2
    assert sentence_support([], "anything") == 0.0


def test_picks_the_right_sentence_among_distractors_and_cites_it_with_its_page() -> None:
    # "사업 기간은 …" shares only 기간 (support 1/2); the 하자보수 sentence has 2/2
    a = ExtractiveAnswerer(max_sentences=1).answer("하자보수 기간은 몇 개월인가요?", RFP)
    assert a.status == "supported"
    assert a.text == "하자보수 기간은 검수 완료일로부터 12개월로 한다. [rfp::chunk-002]"
    assert [(c.chunk_id, c.page) for c in a.citations] == [("rfp::chunk-002", 3)]


def test_best_first_then_chunk_rank_then_position() -> None:
    # content words: 하자보수, 기간, 개월 → 하자보수 sentence 3/3; 사업 기간 sentence 2/3
    a = ExtractiveAnswerer(max_sentences=2).answer("하자보수 기간은 몇 개월인가요?", RFP)
    assert a.text == (
        "하자보수 기간은 검수 완료일로부터 12개월로 한다. [rfp::chunk-002] "
        "사업 기간은 계약일로부터 12개월이다. [rfp::chunk-001]"
    )
    assert [(c.chunk_id, c.page) for c in a.citations] == [
        ("rfp::chunk-002", 3), ("rfp::chunk-001", 1),
    ]


def test_korean_particles_do_not_prevent_a_match() -> None:
    # 유지보수는 / 가용성은 in the text, 유지보수를 / 가용성이 in the questions
    a = ExtractiveAnswerer(max_sentences=1).answer("무상 유지보수를 얼마 동안 제공하나요?", RFP)
    assert a.text == "무상 유지보수는 6개월간 제공한다. [rfp::chunk-003]"  # bullet dropped
    assert a.citations[0].page is None  # the chunk has no page span
    a = ExtractiveAnswerer(max_sentences=1).answer("가용성이 몇 퍼센트 이상이어야 하나요?", RFP)
    assert a.text == "가용성은 99.5% 이상이어야 한다. [rfp::chunk-003]"


def test_german_and_english_questions() -> None:
    a = ExtractiveAnswerer(max_sentences=1).answer("Wie lange dauert die Lieferung?", SHOP)
    assert a.text == "Die Lieferung dauert 2 bis 3 Werktage. [faq::chunk-002]"


@pytest.mark.parametrize(
    ("question", "lang"),
    [("보안 인증은 무엇이 필요한가요?", "ko"),
     ("Welche Zahlungsarten gibt es?", "de"),
     ("Which payment methods are accepted?", "en")],
)
def test_declines_on_weak_evidence_in_the_questions_language(question: str, lang: str) -> None:
    a = ExtractiveAnswerer().answer(question, RFP + SHOP)
    assert (a.status, a.text, a.citations) == ("insufficient", DECLINE_TEXT[lang], [])
    assert is_declined(a)  # the metrics recognise the decline text


def test_min_support_threshold_and_custom_decline_text() -> None:
    # content words 착수, 기간: no sentence holds 착수, so the best support is 1/2
    answerer = ExtractiveAnswerer(min_support=0.75, decline_text={"ko": "모름"})
    a = answerer.answer("착수 기간은?", RFP)
    assert (a.status, a.text) == ("insufficient", "모름")
    assert ExtractiveAnswerer(min_support=0.5).answer("착수 기간은?", RFP).status == "supported"


def test_repeated_sentences_from_overlapping_chunks_are_quoted_once() -> None:
    overlap = [chunk("d::chunk-001", "Die Lieferung dauert 3 Werktage."),
               chunk("d::chunk-002", "Die Lieferung dauert 3 Werktage. Danach folgt mehr.")]
    a = ExtractiveAnswerer(max_sentences=2).answer("Wie lange dauert die Lieferung?", overlap)
    assert a.text == "Die Lieferung dauert 3 Werktage. [d::chunk-001]"


def test_no_context_or_no_content_words_declines() -> None:
    assert ExtractiveAnswerer().answer("하자보수 기간은?", []).status == "insufficient"
    assert ExtractiveAnswerer().answer("What is it?", RFP).status == "insufficient"


def test_deterministic_and_ignores_scores() -> None:
    answerer = ExtractiveAnswerer()
    first = answerer.answer("하자보수 기간은?", RFP, [0.9, 0.5, 0.1])
    assert answerer.answer("하자보수 기간은?", RFP, [0.0, 0.0, 1.0]) == first
    assert answerer.answer("하자보수 기간은?", RFP) == first


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="max_sentences"):
        ExtractiveAnswerer(max_sentences=0)
    with pytest.raises(ValueError, match="min_support"):
        ExtractiveAnswerer(min_support=1.5)
