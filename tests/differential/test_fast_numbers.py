"""The fast number reader against its plain version on seeded generated texts and on
hand-written tricky cases: `extract_numbers` skips the patterns a text's cues rule out,
reads a plain integer by hand and guesses the language only when a numeral needs it;
`numerals`, `match_unit`, `numeral_quantity` and `number_supported` are hand-written
versions of a pattern or a loop. Each must give exactly what its plain version
(``*_reference``) gives, and each cue that is False must prove that its patterns find
nothing."""

from __future__ import annotations

import ast
import random
from decimal import Decimal
from functools import partial
from pathlib import Path

import pytest

from ragassay.metrics.numbers import DATE, TIME, Quantity, dates, extract, units, words
from ragassay.metrics.numbers.cues import text_cues
from ragassay.metrics.numbers.extract import extract_numbers, extract_numbers_reference
from ragassay.metrics.numbers.numerals import (
    numeral_quantity,
    numeral_quantity_reference,
    numerals,
    numerals_reference,
)
from ragassay.metrics.numbers.support import number_supported, number_supported_reference
from ragassay.metrics.numbers.units import match_unit, match_unit_reference
from ragassay.text import guess_language

# pieces that make every kind of number (and its near misses) likely in a generated text
PIECES = [
    # dates and clock times
    "2026-07-01", "2026/7/1", "2026. 7. 1.", "1.7.2026", "3. Juli", "Juli 2026", "May 5th",
    "5 of March, 2027", "Sept. 3", "March", "Mai", "May", "may", "2026년 7월 1일", "7월",
    "1999년", "3년간", "12:30", "9:30:15", "24:00", "3시 15분", "3시스템", "9 Uhr", "9.30 Uhr",
    "neun Uhr", "März", "1st", "2nd of", "Jänner",
    # identifiers, phone numbers, list markers
    "SFR-003", "REQ-SEC-012", "COVID-19", "A4", "2FA", "5G", "x_2", "v1.2.3", "02-123-4567",
    "\n1.", "\n2)", "\n(3)", "\n- 4.", "\n* 5)",
    # numerals, separators, multipliers, prices
    "3", "669", "1819", "0", "007", "3.5", "1,000", "1.000", "0,500", "1.000,50", "1,000.50",
    "1.000.000", "1,2,3", "1.000,- €", "5,–", "3 Mio. €", "3 Millionen", "2 billion",
    "4 thousand", "4 Tausend", "4  Tsd.", "3천만원", "3,000만원", "1억 5천만원", "제3조",
    "5조원", "2백", "EUR 5", "€5", "$ 3", "USD\t7", "KRW5", "£ 2", "EUR\n5",
    # ranges
    "3-5 Tage", "3~5일", "2 to 3 weeks", "3 bis 5", "4 oder 6 Monate", "1 – 2", "5 또는 7 개",
    # units, attached and spaced, Korean particles
    "%", "%p", "€", "Tage", "days", "day", "h", "hrs", "min", "GB", "km", "Stück", "business days",
    "per cent", "percentage\tpoints", "-hour", "개월", "개월간", "개월의", "일반", "일", "원",
    "명", "퍼센트", "영업일", "시간", "주일",
    # number words
    "three", "Twenty-four", "two hundred", "one", "a", "an", "ten", "zone", "eleven",
    "drei", "einundzwanzig", "undzwanzig", "dreißig", "zwölf", "Elf", "eine", "ein",
    "hundert", "tausend", "zweihundert", "Dreitausendfünf", "fünf", "sechzig",
    "세 개", "다섯 명", "두 달", "열두 개월", "한달간", "이틀", "보름", "하루", "삼 년",
    "십이개월", "이십사 시간", "일주일", "이 시간", "두번째",
    # full-width digits and signs, other scripts, blanks
    "３，０００원", "９９.５％", "１．０００ Euro", "ＳＦＲ－００３", "٣ days", "١٢٣",
    "5\u00a0%", "\u00a0", "ſec", "\u212a", "İ",
    # words
    "Kaza", "pelili", "fesi", "Rozu", "tamuzono", "Mugi", "Vertrag", "Frist", "warranty",
    "계약", "기간은", "검수", "delivery", "Lieferung", "the", "und", "being", "their",
]
SEPS = [" ", " ", " ", "", ". ", ", ", "\n", "-", "\t", "/", ":", "(", ")"]


def _text(rng: random.Random) -> str:
    parts = rng.choices(PIECES, k=rng.randint(1, 14))
    return "".join(p + rng.choice(SEPS) for p in parts).strip()


_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]


def _squad_text(rng: random.Random) -> str:
    """A SQuAD-shaped text: Zipf-frequent made-up words with plain integers."""
    out = []
    for _ in range(rng.randint(5, 60)):
        r = rng.random()
        if r < 0.06:
            out.append(str(rng.choice([rng.randint(0, 99), rng.randint(100, 2100)])))
        elif r < 0.08:
            out.append(rng.choice(PIECES))
        else:
            rank = int(rng.paretovariate(1.1)) % 400
            word = "".join(_SYLLABLES[(rank * 7 + i * 13) % len(_SYLLABLES)]
                           for i in range(1 + rank % 5))
            out.append(word.capitalize() if rng.random() < 0.1 else word)
        out.append(rng.choice([" ", " ", " ", ". ", ", ", " \n "]))
    return "".join(out)


def _hand_cases() -> list[str]:
    """Every string written in the unit tests of the number reader, and a few more."""
    source = (Path(__file__).parents[1] / "unit" / "test_numbers.py").read_text("utf-8")
    found = {node.value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return sorted(found | set(PIECES) | {
        "", " ", "5", "5.", ".5", "5,", "a5", "_5", "가5", "5가", "x.5", "x,5", "Die Gebühr "
        "für alle beträgt 1.000 Euro", "The fee is 1.000 EUR", "수수료는 1.000원이다",
        "1.000", "3,000", "1. Punkt\n2) zwei\n(3) drei", "ab 3 - 5 Tagen", "5 ſec", "5 \u212ag",
        "3 Mio", "3  million", "3\tThousand", "1 Mrd.", "5 %p", "9시 30분", "EUR 5 Tage",
        "Mayday 2026", "am 3. Juli 2026", "July 1, 2026", "1st of May 2026", "1 May", "May 1",
    })


def _same_numbers(text: str) -> int:
    fast = extract_numbers(text)
    assert fast == extract_numbers_reference(text), text
    return len(fast)


@pytest.mark.parametrize("seed", range(4))
def test_numbers_equal_the_reference_on_mixed_texts(seed: int) -> None:
    rng = random.Random(seed)
    found = sum(_same_numbers(_text(rng)) for _ in range(1500))
    assert found > 4000  # the texts do hold numbers


@pytest.mark.parametrize("seed", range(2))
def test_numbers_equal_the_reference_on_squad_shaped_texts(seed: int) -> None:
    rng = random.Random(100 + seed)
    found = sum(_same_numbers(_squad_text(rng)) for _ in range(1000))
    assert found > 2000


def test_numbers_equal_the_reference_on_the_hand_cases() -> None:
    for text in _hand_cases():
        _same_numbers(text)
    # the cases the fast paths were written around
    assert [q.raw for q in extract_numbers("kivu 669 tamuzono 1819.")] == ["669", "1819"]
    assert [(q.value, q.unit) for q in extract_numbers("3 Mio. €")] == [(3_000_000, "eur")]
    assert [q.unit for q in extract_numbers("EUR\n5")] == ["eur"]
    assert extract_numbers("a5 x.5 _5") == []


@pytest.mark.parametrize("seed", range(2))
def test_numeral_readers_equal_their_references(seed: int) -> None:
    rng = random.Random(200 + seed)
    texts = [_text(rng) for _ in range(1000)] + [_squad_text(rng) for _ in range(300)]
    read = 0
    for text in texts + _hand_cases():
        found = list(numerals(text))
        assert [m.span() for m in found] == [m.span() for m in numerals_reference(text)], text
        lang = guess_language(text)
        for m in found:
            fast = numeral_quantity(text, m, partial(guess_language, text))
            assert fast == numeral_quantity_reference(text, m, lang), (text, m)
            read += fast is not None
    assert read > 3000


def test_the_language_is_asked_only_for_an_ambiguous_numeral() -> None:
    asked: list[str] = []

    def language() -> str:
        asked.append("?")
        return "de"

    for text in ["669 Tage", "3.5 %", "1.000.000", "0,500", "1,000.50"]:
        for m in numerals(text):
            numeral_quantity(text, m, language)
    assert asked == []
    for text in ["1.000 Euro", "3,000"]:
        for m in numerals(text):
            numeral_quantity(text, m, language)
    assert len(asked) == 2


@pytest.mark.parametrize("seed", range(2))
def test_match_unit_equals_its_reference_at_every_position(seed: int) -> None:
    rng = random.Random(300 + seed)
    units_found = 0
    for text in [_text(rng) for _ in range(600)] + _hand_cases():
        for pos in range(len(text) + 1):
            fast = match_unit(text, pos)
            assert fast == match_unit_reference(text, pos), (text, pos)
            units_found += fast[0] is not None
    assert units_found > 2000


# Each cue and the patterns it guards: a False cue must leave them nothing to find.
_GUARDED = [
    *[(name, pattern) for name, pattern in zip(dates.DATE_CUES, dates._DATE_PATTERNS,
                                               strict=True)],
    ("colon", dates.TIME_RE), ("si", dates.KO_CLOCK_RE), ("joined", extract._IDENTIFIER_RE),
    ("phone", extract._PHONE_RE), ("list_marker", extract._LIST_MARKER_RE),
    ("english", words._EN_RUN_RE),
]


@pytest.mark.parametrize("seed", range(2))
def test_a_false_cue_proves_its_patterns_find_nothing(seed: int) -> None:
    rng = random.Random(400 + seed)
    skipped = 0
    for text in [_text(rng) for _ in range(1500)] + [_squad_text(rng) for _ in range(300)] \
            + _hand_cases():
        folded = extract._fold_width(text)
        cues = text_cues(folded)
        for name, pattern in _GUARDED:
            if not getattr(cues, name):
                assert pattern.search(folded) is None, (name, text)
                skipped += 1
        if not cues.digit:
            assert list(numerals(folded)) == [], text
        if not cues.german_or_korean:
            assert list(words._word_by_word(folded)) == [], text
        if not cues.date:
            assert list(dates.find_dates_reference(folded)) == [], text
    assert skipped > 10_000


def test_german_number_words_are_whole_words_or_compounds() -> None:
    # what the ASCII cue relies on: every German number word is one of DE_WHOLE_WORDS or
    # holds one of DE_COMPOUND_PARTS
    rng = random.Random(7)
    parts = ["ein", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
             "zehn", "elf", "zwölf", "dreizehn", "zwanzig", "dreissig", "sechzig", "hundert",
             "tausend", "und", "eine", "einen", "s", "x"]
    numbers = 0
    for _ in range(20_000):
        word = "".join(rng.choices(parts, k=rng.randint(1, 4)))
        if words._german_word(word):
            numbers += 1
            assert word in words.DE_WHOLE_WORDS or any(
                p in word for p in words.DE_COMPOUND_PARTS), word
    assert numbers > 1000


def test_units_cut_by_first_letter_keep_every_word() -> None:
    cut = sorted(p.pattern for p in units._LATIN_UNIT_BY_FIRST.values())
    assert sum(p.count("|") + 1 for p in cut) == len(units._LATIN_UNITS)


@pytest.mark.parametrize("seed", range(2))
def test_number_supported_equals_its_reference(seed: int) -> None:
    rng = random.Random(500 + seed)
    read = [extract_numbers(_text(rng)) for _ in range(400)]
    made = [Quantity(Decimal(v), u, str(v), (0, 1), alts)
            for v in (0, 1, 7, 2026, 20260701, 20260000, 900, "7.0", "1.000")
            for u in (None, "day", DATE, TIME)
            for alts in ((), (Decimal(1000),))]
    pool = [q for qs in read for q in qs] + made
    supported = 0
    for _ in range(4000):
        q = rng.choice(pool)
        sources = rng.sample(pool, rng.randint(0, 6))
        fast = number_supported(q, sources)
        assert fast == number_supported_reference(q, sources), (q, sources)
        supported += fast
    assert supported > 300
