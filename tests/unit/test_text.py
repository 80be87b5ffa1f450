"""Shared text helpers: normalisation, content words (Korean josa), sentences, containment."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragassay.sentences import split_sentences
from ragassay.text import (
    contains_term,
    content_words,
    fold_text,
    guess_language,
    strip_korean_suffix,
    tokens,
)

# --- fold_text / tokens ---------------------------------------------------------------


def test_normalize_folds_width_case_and_whitespace() -> None:
    assert fold_text("ＡＢＣ１") == "abc1"
    assert fold_text("  Straße \n\t  API  ") == "strasse api"
    assert fold_text("don’t") == "don't"


def test_tokens_keep_numbers_whole() -> None:
    assert tokens("가용성 99.5% 이상, 3,000만원 / Version 1.2.3") == [
        "가용성", "99.5", "이상", "3,000만원", "version", "1.2.3",
    ]
    assert tokens("Die Frist: 5 Tage.") == ["die", "frist", "5", "tage"]


# --- Korean suffixes and content words ------------------------------------------------


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        ("보증기간은", "보증기간"),
        ("하자보수를", "하자보수"),
        ("기간이", "기간"),
        ("운영합니다", "운영"),
        ("서버에서는", "서버"),
        ("제공하여야", "제공"),
        ("나이", "나이"),  # "나" would be a one-syllable stem
        ("3천만", "3천만"),  # 만 after a number is a multiplier, not "only"
        ("api연계를", "api연계"),
        ("warranty", "warranty"),
    ],
)
def test_strip_korean_suffix(token: str, stem: str) -> None:
    assert strip_korean_suffix(token) == stem


def test_content_words_drop_question_words_and_particles() -> None:
    assert content_words("보증기간은 몇 개월인가요?") == ["보증기간", "개월"]
    assert content_words("하자보수를 해야 하는 기간이 얼마입니까?") == ["하자보수", "기간"]
    assert content_words("무상 유지보수 기간은 몇 년인가요?") == ["무상", "유지보수", "기간"]
    assert content_words("Wie lange ist die Gewährleistung?") == ["gewährleistung"]
    assert content_words("How long is the warranty period?") == ["warranty", "period"]


def test_content_words_lang_picks_one_stopword_list() -> None:
    # "die" is a German article but an English verb
    assert content_words("Why did the battery die?", lang="en") == ["battery", "die"]
    assert content_words("Why did the battery die?") == ["battery"]


# --- sentences ------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_split_sentences_en_de_ko() -> None:
    assert sentences("The fee is 99.5 €. It is due in 5 days! Really? Yes.") == [
        "The fee is 99.5 €.", "It is due in 5 days!", "Really?", "Yes.",
    ]
    assert sentences("Die Lieferung dauert z.B. 3 Tage. Nr. 5 gilt am 1. Juli nicht.") == [
        "Die Lieferung dauert z.B. 3 Tage.", "Nr. 5 gilt am 1. Juli nicht.",
    ]
    assert sentences("하자보수 기간은 12개월이다. 장애 시 24시간 이내 조치한다.다음 조항이다.") == [
        "하자보수 기간은 12개월이다.", "장애 시 24시간 이내 조치한다.", "다음 조항이다.",
    ]
    assert sentences("See e.g. section 1.2.3 for details. Version 2 follows.") == [
        "See e.g. section 1.2.3 for details.", "Version 2 follows.",
    ]
    assert sentences("終わり。次") == ["終わり。", "次"]


def test_split_sentences_numbers_dates_and_list_markers_do_not_split() -> None:
    assert sentences("계약은 2026. 7. 1. 부터 시작한다.") == ["계약은 2026. 7. 1. 부터 시작한다."]
    assert sentences("1. Der Auftragnehmer haftet.\n2. Die Frist beträgt 14 Tage.") == [
        "1. Der Auftragnehmer haftet.", "2. Die Frist beträgt 14 Tage.",
    ]


def test_split_sentences_lines_bullets_and_tables() -> None:
    text = "제목\n- 무상 유지보수는 6개월. 이후 유상.\n| 항목 | 기간. 비고 |\n---\n\n  끝  "
    assert sentences(text) == [
        "제목", "- 무상 유지보수는 6개월.", "이후 유상.", "| 항목 | 기간. 비고 |", "끝",
    ]


def test_split_sentences_spans_point_into_the_text() -> None:
    text = "  Ab cd.  Ef gh?\r\nIj "
    assert split_sentences(text) == [(2, 8), (10, 16), (18, 20)]
    # a single letter before a period is taken for an initial ("J. Smith")
    assert sentences("Plan B. Next") == ["Plan B. Next"]


@given(st.text(alphabet=st.sampled_from(list("ab 가나.!?\n12,-|")), max_size=60))
def test_split_sentences_properties(text: str) -> None:
    spans = split_sentences(text)
    prev_end = 0
    for a, b in spans:
        assert prev_end <= a < b <= len(text)
        assert not text[a].isspace() and not text[b - 1].isspace()
        prev_end = b
    # every word character lies in some sentence
    for m in re.finditer(r"\w", text):
        assert any(a <= m.start() < b for a, b in spans)


# --- contains_term --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("haystack", "term", "expected"),
    [
        ("API 연계 방식은 REST이다", "API연계", True),
        ("API연계 방식", "api 연계", True),
        ("ＡＰＩ연계", "API 연계", True),
        ("Die GEWÄHRLEISTUNG beträgt", "Gewährleistung", True),
        ("I don’t know.", "I don't know", True),
        ("기간은 6개월간이다", "6개월", True),
        ("기간은 16개월이다", "6개월", False),  # a number does not match inside a longer one
        ("가용성 99.55%", "99.5", False),
        ("가용성 99.5%", "99.5", True),
        ("Version 1.5", "5", False),
        ("보증기간", "", False),  # a blank term never matches
    ],
)
def test_contains_term(haystack: str, term: str, expected: bool) -> None:
    assert contains_term(haystack, term) is expected


@given(st.text(min_size=1, max_size=30), st.text(max_size=10), st.text(max_size=10))
def test_contains_term_finds_a_term_between_spaces(term: str, left: str, right: str) -> None:
    if fold_text(term):
        assert contains_term(f"{left} {term} {right}", term)


@given(st.text(max_size=40))
def test_normalize_is_idempotent(text: str) -> None:
    assert fold_text(fold_text(text)) == fold_text(text)


def test_guess_language() -> None:
    assert guess_language("보증기간은 몇 개월인가요?") == "ko"
    assert guess_language("API 연계 방식은?") == "ko"
    assert guess_language("Wie lange gilt die Gewährleistung?") == "de"
    assert guess_language("Was kostet der Versand?") == "de"
    assert guess_language("How long is the warranty?") == "en"
