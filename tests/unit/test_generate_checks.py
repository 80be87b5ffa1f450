"""The checks of `ragassay generate`, each with hand-written items that must be dropped for
exactly its reason, and items that pass. The corpus is the three short documents of
`generated_set.py` (Korean, German, English), chunked as `ragassay index` chunks them."""

from __future__ import annotations

from pathlib import Path

import pytest
from generated_set import write_docs

from ragassay.errors import InputError
from ragassay.generate.checks import (
    DROP_REASONS,
    NEAR_DUPLICATE,
    Candidate,
    Support,
    answers_match,
    check_candidate,
    near_duplicate,
    number_problem,
    question_language,
    similarity,
)
from ragassay.generate.sampling import load_corpus, parse_kinds, quotas


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return load_corpus(write_docs(tmp_path_factory.mktemp("docs")))


def item(kind: str, chunk: str, question: str, answer: str = "", sentence: str = "",
         **extra: object) -> Candidate:
    supports = [Support(chunk, answer, sentence)] if answer or sentence else []
    return Candidate("c0001", kind, [chunk], question, supports=supports, **extra)  # type: ignore[arg-type]


def reason(c: Candidate, corpus) -> str | None:  # type: ignore[no-untyped-def]
    drop = check_candidate(c, corpus.index)
    return None if drop is None else drop.reason


def test_good_items_pass_in_each_language(corpus) -> None:  # type: ignore[no-untyped-def]
    ko = item("numeric", "ko::chunk-001", "보증기간은 얼마인가요?", "24개월",
              "보증기간은 검수 완료일로부터 24개월로 한다.")
    de = item("numeric", "de::chunk-001", "Wie viel kostet der Versand?", "4,90 Euro",
              "Der Versand kostet 4,90 Euro.")
    en = item("factoid", "en::chunk-001", "How long is the warranty period?",
              "12 months", "the warranty period is 12 months from acceptance.")
    for c in (ko, de, en):
        assert reason(c, corpus) is None
        assert [lb.support_claim for lb in c.labels] == [c.supports[0].sentence]


def test_support_not_in_chunk(corpus) -> None:  # type: ignore[no-untyped-def]
    reworded = item("factoid", "en::chunk-001", "How long is the warranty?", "12 months",
                    "The warranty lasts 12 months.")
    assert reason(reworded, corpus) == "support_not_in_chunk"
    other_chunk = item("factoid", "en::chunk-001", "Wie viel kostet der Versand?",
                       "4,90 Euro", "Der Versand kostet 4,90 Euro.")
    assert reason(other_chunk, corpus) == "support_not_in_chunk"


def test_label_not_ok_for_a_sentence_in_two_chunks(tmp_path: Path) -> None:
    # 60-character windows overlapping by 40: the short second sentence (characters 47-78)
    # stands whole in chunk 2 and chunk 3, so its label would be `also_in`, not `ok`.
    (tmp_path / "doc.txt").write_text("The warranty period is twelve months from the "
                                      "day. Support runs 8 hours. The end of this text.",
                                      encoding="utf-8")
    small = load_corpus(tmp_path, chunk_size=60, overlap=40)
    texts = [c.text for c in small.index.chunks]
    assert sum("Support runs 8 hours." in t for t in texts) >= 2
    c = item("numeric", "doc::chunk-002", "How long does support run?", "8 hours",
             "Support runs 8 hours.")
    drop = check_candidate(c, small.index)
    assert drop is not None and drop.reason == "label_not_ok"
    assert drop.detail.startswith("doc::chunk-002: also_in")


def test_answer_not_in_support(corpus) -> None:  # type: ignore[no-untyped-def]
    c = item("numeric", "ko::chunk-001", "보증기간은 얼마인가요?", "36개월",
             "보증기간은 검수 완료일로부터 24개월로 한다.")
    assert reason(c, corpus) == "answer_not_in_support"
    # "24개월" is not in a sentence holding "124개월": contains_term keeps numbers whole
    assert not answers_match(["24개월"], "124개월")


def test_number_unreadable() -> None:
    assert number_problem("24개월", numeric=True) is None
    assert number_problem("4,90 Euro", numeric=True) is None
    assert number_problem("two engineers", numeric=True) is None  # a number word reads
    assert "holds no number" in (number_problem("on site", numeric=True) or "")
    assert "'003'" in (number_problem("SFR-003", numeric=False) or "")  # an identifier


def test_number_unreadable_as_a_drop(tmp_path: Path) -> None:
    (tmp_path / "req.txt").write_text("Requirement SFR-003 covers the login page of the "
                                      "portal and the password reset flow for every user.",
                                      encoding="utf-8")
    small = load_corpus(tmp_path)
    c = item("factoid", "req::chunk-001", "Which requirement covers the login page?",
             "SFR-003", "Requirement SFR-003 covers the login page of the portal and the "
             "password reset flow for every user.")
    assert reason(c, small) == "number_unreadable"


def test_wrong_language(corpus) -> None:  # type: ignore[no-untyped-def]
    english_for_korean = item("numeric", "ko::chunk-001", "How long is the warranty?",
                              "24개월", "보증기간은 검수 완료일로부터 24개월로 한다.")
    assert reason(english_for_korean, corpus) == "wrong_language"
    english_for_german = item("numeric", "de::chunk-001", "How much is the shipping?",
                              "4,90 Euro", "Der Versand kostet 4,90 Euro.")
    assert reason(english_for_german, corpus) == "wrong_language"
    german_for_english = item("numeric", "en::chunk-001", "Wie lange gilt die Garantie?",
                              "12 months", "The warranty period is 12 months from acceptance.")
    assert reason(german_for_english, corpus) == "wrong_language"


def test_question_language_by_script_and_stop_words() -> None:
    assert question_language("보증기간은 얼마인가요?") == "ko"
    assert question_language("SLA 기준은 무엇인가요?") == "ko"  # Hangul ≥ half the letters
    assert question_language("Wie lange dauert die Lieferung?") == "de"
    assert question_language("Was kostet der Versand nach Österreich?") == "de"
    assert question_language("What does shipping cost?") == "en"
    assert question_language("Lieferzeit?") is None  # no stop word: cannot tell
    assert question_language("What is 보증기간 in the contract of the city?") is None  # mixed
    assert question_language("24?") is None


def test_answer_in_question(corpus) -> None:  # type: ignore[no-untyped-def]
    c = item("numeric", "en::chunk-001", "Is the warranty period 12 months?", "12 months",
             "The warranty period is 12 months from acceptance.")
    assert reason(c, corpus) == "answer_in_question"


def test_answer_in_corpus_for_an_unanswerable_item(corpus) -> None:  # type: ignore[no-untyped-def]
    held = item("unanswerable", "en::chunk-001", "How many engineers are on site?",
                missing=["engineers"])
    drop = check_candidate(held, corpus.index)
    assert drop is not None and drop.reason == "answer_in_corpus"
    assert drop.detail.startswith("en::chunk-001")
    in_german_doc = item("unanswerable", "en::chunk-001", "What is the Versand fee of the "
                         "contract?", missing=["Versand"])
    assert reason(in_german_doc, corpus) == "answer_in_corpus"  # the German document has it
    absent = item("unanswerable", "en::chunk-001", "Who is the project manager of the "
                  "contractor?", missing=["project manager"])
    assert reason(absent, corpus) is None


def test_distractor_same_value(corpus) -> None:  # type: ignore[no-untyped-def]
    same = item("distractor", "en::chunk-001", "How long is the warranty period?",
                "12 months", "The warranty period is 12 months from acceptance.",
                distractor="ko::chunk-001")
    assert reason(same, corpus) is None  # the Korean chunk says 24개월, not 12 months
    twin = item("distractor", "ko::chunk-001", "장애 발생 시 몇 시간 이내에 도착해야 하나요?",
                "4시간", "장애가 발생하면 4시간 이내에 현장에 도착하여야 한다.",
                distractor="ko::chunk-001")
    drop = check_candidate(twin, corpus.index)
    assert drop is not None and drop.reason == "distractor_same_value"


def test_not_answerable_from_chunk_matching() -> None:
    assert answers_match(["24개월"], "24개월")
    assert answers_match(["24개월"], "보증기간은 24개월입니다")
    assert answers_match(["4,90 Euro"], "4,90 euro")
    assert answers_match(["the Denver Broncos"], "Denver Broncos")  # half or more of it
    assert not answers_match(["24개월"], "36개월")
    assert not answers_match(["24개월"], "")
    assert not answers_match(["Denver Broncos"], "Denver")  # less than half of it
    assert answers_match(["4,90 Euro", "50 Euro"], "4,90 Euro, kostenlos ab 50 Euro")
    assert not answers_match(["4,90 Euro", "50 Euro"], "4,90 Euro")
    # numbers compare by the number reader: the same value in the same unit
    assert answers_match(["24 Monate"], "24 months")
    assert answers_match(["4,90 Euro"], "4.90 EUR")
    assert not answers_match(["24 Monate"], "24 weeks")
    assert not answers_match(["24 Monaten"], "Monaten")  # the piece drops the number


def test_near_duplicate_threshold_by_hand() -> None:
    # trigram Jaccard of the two normalised questions, counted by hand in the docstring
    a, b = "Wie lange gilt die Garantie?", "Wie lange gilt die Garantie genau?"
    assert similarity(a, b) >= NEAR_DUPLICATE
    assert similarity(a, "Was kostet der Versand?") < 0.2
    assert similarity("", "") == 0.0 and similarity(a, a) == 1.0
    drop = near_duplicate(b, ["Was kostet der Versand?", a])
    assert drop is not None and drop.reason == "near_duplicate" and repr(a) in drop.detail
    assert near_duplicate("Was kostet der Versand?", [a]) is None


def test_every_reason_is_documented() -> None:
    assert list(DROP_REASONS)[:2] == ["endpoint_error", "unparsable_reply"]
    assert all(DROP_REASONS.values())


def test_kinds_and_quotas() -> None:
    assert quotas(10, parse_kinds(None)) == {"factoid": 3, "numeric": 3, "two_chunk": 2,
                                             "unanswerable": 1, "distractor": 1}
    assert sum(quotas(7, parse_kinds(None)).values()) == 7
    assert quotas(3, parse_kinds("factoid,numeric")) == {"factoid": 2, "numeric": 1}
    assert parse_kinds("factoid=3,unanswerable=1") == {"factoid": 0.75, "unanswerable": 0.25}
    with pytest.raises(InputError, match="unknown kind 'essay'"):
        parse_kinds("essay")
