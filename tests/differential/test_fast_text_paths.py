"""The text fast paths against their plain versions on seeded generated texts: the date
finder and the number-word reader skip what a text cannot hold (a separator, a month name,
Hangul, a German number word's part), and the claim checks read each source's sentences,
words and numbers once (cached) — each must give exactly what the plain version gives."""

from __future__ import annotations

import random

import pytest

from ragassay.claims import deterministic
from ragassay.claims import sources as claim_sources
from ragassay.metrics.numbers.dates import find_dates, find_dates_reference
from ragassay.metrics.numbers.words import word_quantities, word_quantities_reference
from ragassay.text import contains_term, content_words, squash, term_pattern

# pieces that make dates and number words (and near misses) likely in a generated text
PIECES = [
    "2026-07-01", "2026/7/1", "2026. 7. 1.", "1.7.2026", "3. Juli", "Juli 2026", "May 5th",
    "5 of March, 2027", "Sept. 3", "March", "Mai", "2026년 7월 1일", "7월", "1999년", "3년간",
    "12:30", "3시 15분", "three", "twenty-four", "two hundred", "one", "drei", "einundzwanzig",
    "dreißig", "zwölf", "Elf", "eine", "hundert", "tausend", "세 개", "다섯 명", "이틀", "삼 년",
    "십이개월", "하루", "self", "being", "Maize", "Mayday", "Juni5", "3.5", "1,000", "-", "/",
    ".", "Tage", "days", "개월", "Euro", "%", "km", "und", "the", "Wochen", "Monate",
]
WORDS = ["Kaza", "pelili", "fesi", "Rozu", "lidotu", "Vertrag", "Frist", "warranty",
         "계약", "기간은", "검수", "delivery", "Lieferung"]


def _text(rng: random.Random) -> str:
    parts = rng.choices(PIECES + WORDS, k=rng.randint(1, 14))
    seps = [" ", " ", " ", "", ". ", ", ", "\n", "-"]
    return "".join(p + rng.choice(seps) for p in parts).strip()


@pytest.mark.parametrize("seed", range(4))
def test_dates_and_number_words_equal_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    found = 0
    for _ in range(1500):
        text = _text(rng)
        fast = list(find_dates(text))
        assert fast == list(find_dates_reference(text)), text
        words = list(word_quantities(text))
        assert words == list(word_quantities_reference(text)), text
        found += len(fast) + len(words)
    assert found > 1000  # the texts do hold dates and number words


def test_the_hand_checked_cases() -> None:
    # a month name as part of a longer word is no month: both skip it
    assert list(find_dates("Mayday 2026")) == list(find_dates_reference("Mayday 2026")) == []
    # every pattern's find (the longest wins later, in extract_numbers)
    assert [q.raw for q in find_dates("am 3. Juli 2026")] == ["3. Juli 2026", "Juli 2026"]
    # "dreißig" folds to "dreissig": the German pass runs, as the reference's does
    assert [q.value for q in word_quantities("dreißig Tage")] == [30]
    assert [q.value for q in word_quantities("세 개월")] == [3]


def _plain_decide(claim: str, sources: list[str]) -> deterministic.Decision | None:
    """decide_reference() with every cache emptied before each call (nothing carried over)."""
    for f in (claim_sources.sentences_of, claim_sources.words_of, claim_sources.numbers_of):
        f.cache_clear()
    return deterministic.decide_reference(claim, sources)


@pytest.mark.parametrize("seed", range(2))
def test_cached_claim_checks_equal_uncached_ones(seed: int) -> None:
    rng = random.Random(seed)
    sources = [". ".join(_text(rng) for _ in range(rng.randint(1, 4))) + "."
               for _ in range(40)]
    decided = 0
    for _ in range(300):
        chosen = rng.sample(sources, rng.randint(0, 4))
        # a claim from a source sentence (often entailed), or made up (often not)
        own = claim_sources.source_sentences(chosen)
        claim = rng.choice(own) if own and rng.random() < 0.6 else _text(rng)
        warm = deterministic.decide_reference(claim, chosen)
        assert warm == _plain_decide(claim, chosen), (claim, chosen)
        assert deterministic.decide(claim, chosen) == warm, (claim, chosen)
        decided += warm is not None
    assert decided > 50
    # the cached word sets are the plain content words
    s = "Die Frist beträgt 3 Tage."
    assert claim_sources.words_of(s) == frozenset(content_words(s))


@pytest.mark.parametrize("seed", range(2))
def test_contains_term_equals_its_pattern(seed: int) -> None:
    rng = random.Random(seed)
    hits = 0
    for _ in range(2000):
        hay = _text(rng)
        term = rng.choice([*PIECES, *WORDS, " ", "API 연계", "ＡＢＣ", "Tage."])
        pattern = term_pattern(term)
        plain = pattern is not None and pattern.search(squash(hay)) is not None
        assert contains_term(hay, term) == plain, (hay, term)
        hits += plain
    assert hits > 100
