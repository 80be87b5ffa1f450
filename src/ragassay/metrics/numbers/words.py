"""Number words (German, English, Korean native, Korean day words, Sino-Korean) as quantities."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from functools import lru_cache

from .quantity import TIME, Quantity
from .units import GAP_RE, HANGUL_RUN, is_ko_tail, match_unit

# --- number words ---------------------------------------------------------------------

_DE_DIGITS = {"ein": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7,
              "acht": 8, "neun": 9}
_DE_TEENS = {"zehn": 10, "elf": 11, "zwölf": 12, "dreizehn": 13, "vierzehn": 14,
             "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19}
_DE_TENS = {"zwanzig": 20, "dreissig": 30, "vierzig": 40, "fünfzig": 50, "sechzig": 60,
            "siebzig": 70, "achtzig": 80, "neunzig": 90}
_DE_ARTICLES = {"ein", "eine", "einen", "einem", "einer", "eines"}
_DE_SIMPLE = {**{k: v for k, v in _DE_DIGITS.items() if k != "ein"}, "eins": 1,
              **_DE_TEENS, **_DE_TENS, "hundert": 100, "tausend": 1000,
              **dict.fromkeys(_DE_ARTICLES, 1)}
_DE_DIGIT_ALT = "|".join(_DE_DIGITS)
_DE_COMPOUND_RE = re.compile(
    rf"(?:({_DE_DIGIT_ALT}|{'|'.join(_DE_TEENS)})?(tausend))?"
    rf"(?:({_DE_DIGIT_ALT})?(hundert))?(?:und)?"
    rf"(?:(?:({_DE_DIGIT_ALT})und)?({'|'.join(_DE_TENS)})|({'|'.join(_DE_SIMPLE)}))?"
)


@lru_cache(maxsize=65536)  # called for every word of every text: words repeat
def _german_word(word: str) -> tuple[int, bool] | None:
    """Value of a German number word and whether it is an article (needs a unit)."""
    w = word.casefold()
    if w in _DE_SIMPLE:
        return _DE_SIMPLE[w], w in _DE_ARTICLES
    m = _DE_COMPOUND_RE.fullmatch(w)
    if not m or not any(m.groups()):
        return None
    k_digit, k, h_digit, h, unit, tens, simple = m.groups()
    lex = {**_DE_DIGITS, **_DE_TEENS}
    value = (lex.get(k_digit or "", 1) * 1000 if k else 0) + (
        _DE_DIGITS.get(h_digit or "", 1) * 100 if h else 0)
    if tens:
        value += _DE_TENS[tens] + _DE_DIGITS.get(unit or "", 0)
    elif simple:
        if simple in _DE_ARTICLES or simple in ("hundert", "tausend"):
            return None
        value += _DE_SIMPLE[simple]
    return value, False


_EN_VALUES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split()) if i}
_EN_VALUES.update({w: 10 * i for i, w in enumerate(
    "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i >= 2})
_EN_SCALES = {"hundred": 100, "thousand": 1000}
EN_NUMBER_WORDS = frozenset([*_EN_VALUES, *_EN_SCALES])
_EN_RUN_RE = re.compile(
    r"\b(?:" + "|".join([*_EN_VALUES, *_EN_SCALES]) + r")(?:[- ](?:"
    + "|".join([*_EN_VALUES, *_EN_SCALES]) + r"))*\b",
    re.IGNORECASE,
)


def _english_run(run: str) -> tuple[int, bool] | None:
    """Value of an English number-word run (``twenty-four``, ``two hundred``) and whether it
    is the lone word ``one`` (needs a unit)."""
    words = re.split(r"[- ]", run.casefold())
    total, current = 0, 0
    for w in words:
        if w == "hundred":
            current = (current or 1) * 100
        elif w == "thousand":
            total, current = total + (current or 1) * 1000, 0
        else:
            current += _EN_VALUES[w]
    return total + current, words == ["one"]


_KO_NATIVE_RE = re.compile(
    r"(열|스물|스무|서른|마흔|쉰)?(하나|한|둘|두|셋|세|넷|네|다섯|여섯|일곱|여덟|아홉)?"
)
_KO_NATIVE = {"열": 10, "스물": 20, "스무": 20, "서른": 30, "마흔": 40, "쉰": 50, "하나": 1,
              "한": 1, "둘": 2, "두": 2, "셋": 3, "세": 3, "넷": 4, "네": 4, "다섯": 5,
              "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_KO_COUNTERS = {"개월": "month", "달": "month", "해": "year", "주일": "week", "주": "week",
                "시간": "hour", "번": "times", "차례": "times", "개": "item", "명": "person",
                "가지": "kind", "곳": "place", "군데": "place"}
_KO_DAY_WORDS = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7,
                 "여드레": 8, "아흐레": 9, "열흘": 10, "보름": 15}
_SINO_DIGITS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SINO_RE = re.compile(r"(?:[이삼사오육칠팔구]?백)?(?:[이삼사오육칠팔구]?십)?[일이삼사오육칠팔구]?")
_SINO_ATTACHED = ("개월", "주일", "년")
_SINO_SPACED = {"개월": "month", "년": "year", "주": "week", "주일": "week", "시간": "hour",
                "일": "day", "영업일": "business_day", "분": "minute", "퍼센트": "percent"}


def _sino_value(word: str) -> int | None:
    if not word or not _SINO_RE.fullmatch(word):
        return None
    total, current = 0, 0
    for ch in word:
        if ch in _SINO_DIGITS:
            current = _SINO_DIGITS[ch]
        else:
            total += (current or 1) * (100 if ch == "백" else 10)
            current = 0
    return total + current


def _counter_at(text: str, pos: int, counters: dict[str, str],
                allow_space: bool = True) -> tuple[str, int] | None:
    """A Korean counter at ``pos`` (attached, or after blanks) followed only by particles."""
    gap = GAP_RE.match(text, pos)
    start = gap.end() if (gap and allow_space) else pos
    for word in sorted(counters, key=lambda w: (-len(w), w)):
        if text.startswith(word, start):
            end = start + len(word)
            tail = HANGUL_RUN.match(text, end)
            if is_ko_tail(tail.group() if tail else ""):
                return counters[word], end
    return None


# Every German number word, case-folded, holds one of these (the compound pattern's parts):
# a text whose case-folded form holds none has no German number word.
DE_STEMS = ("ein", *(w for w in _DE_DIGITS if w != "ein"), "zehn", "elf", "zwölf", *_DE_TENS,
            "hundert", "tausend")
_DE_STEMS = re.compile("|".join(DE_STEMS))
# A German number word is one of these whole words or a compound, which holds "und",
# "hundert" or "tausend" (einundzwanzig, zweihundert, dreitausend; "hundert" holds "und").
DE_WHOLE_WORDS = frozenset(_DE_SIMPLE)
DE_COMPOUND_PARTS = ("und", "tausend")
_ANY_HANGUL = re.compile("[\uac00-\ud7a3]")


def word_quantities(text: str, english: bool = True,
                    others: bool | None = None) -> Iterator[Quantity]:
    """German, English and Korean number words; articles and Korean native numerals only
    with a unit after them: :func:`word_quantities_reference`'s, in its order. Fast because
    the word-by-word pass runs only on a text that holds Hangul or a German number word's
    part (most texts hold neither). A caller that knows the text holds no English number
    word (``english=False``), or whether it holds Hangul or a German part (``others``),
    says so (the text's cues, `cues.Cues`)."""
    if english:
        yield from _english_words(text)
    if others is None:
        others = bool(_ANY_HANGUL.search(text) or _DE_STEMS.search(text.casefold()))
    if others:
        yield from _word_by_word(text)


def word_quantities_reference(text: str) -> Iterator[Quantity]:
    """The plain version of :func:`word_quantities` (every word looked at), kept as the
    reference its tests compare it with."""
    yield from _english_words(text)
    yield from _word_by_word(text)


def _english_words(text: str) -> Iterator[Quantity]:
    """The English number-word runs of ``text``."""
    for m in _EN_RUN_RE.finditer(text):
        english = _english_run(m.group())
        if english is None:
            continue
        value, needs_unit = english
        q = _word_quantity(text, m.start(), m.end(), value, needs_unit)
        if q:
            yield q


def _word_by_word(text: str) -> Iterator[Quantity]:
    """The German and Korean number words of ``text``, word by word."""
    for m in re.finditer(r"[^\W\d_]+", text):
        word = m.group()
        if word[0].isascii() or word[0] in "äöüÄÖÜ":
            de = _german_word(word)
            if de:
                q = _word_quantity(text, m.start(), m.end(), de[0], de[1])
                if q:
                    yield q
        elif "\uac00" <= word[0] <= "\ud7a3":
            yield from _korean_words(text, m.start(), m.end())


def _word_quantity(text: str, start: int, end: int, value: int,
                   needs_unit: bool) -> Quantity | None:
    unit, unit_end = match_unit(text, end)
    if unit is None and needs_unit:
        return None
    if unit == TIME:  # "neun Uhr"
        value *= 100
    stop = max(end, unit_end)
    return Quantity(Decimal(value), unit, text[start:stop], (start, stop))


def _korean_words(text: str, start: int, end: int) -> Iterator[Quantity]:
    """Korean number words at the start of the Hangul run ``text[start:end]``."""
    run = text[start:end]
    for word, days in _KO_DAY_WORDS.items():
        if run.startswith(word) and is_ko_tail(run[len(word):]):
            stop = start + len(word)
            yield Quantity(Decimal(days), "day", text[start:stop], (start, stop))
            return
    native = _KO_NATIVE_RE.match(run)
    if native and native.group():
        counter = _counter_at(text, start + native.end(), _KO_COUNTERS,
                              allow_space=native.end() == len(run))
        if counter:
            value = sum(_KO_NATIVE[g] for g in native.groups() if g)
            unit, stop = counter
            yield Quantity(Decimal(value), unit, text[start:stop], (start, stop))
            return
    sino = re.match(r"[일이삼사오육칠팔구십백]+", run)
    if not sino:
        return
    for n in range(len(sino.group()), 0, -1):  # the longest numeral that parses
        parsed = _sino_value(run[:n])
        if parsed is None:
            continue
        rest = run[n:]
        attached = next((u for u in _SINO_ATTACHED if rest.startswith(u)), None)
        if attached and is_ko_tail(rest[len(attached):]):
            stop = start + n + len(attached)
            yield Quantity(Decimal(parsed), _SINO_SPACED[attached], text[start:stop],
                           (start, stop))
            return
        if not rest:
            counters = _SINO_SPACED if n >= 2 else {"개월": "month"}
            counter = _counter_at(text, end, counters)
            if counter and end < len(text) and text[end] in " \t":
                unit, stop = counter
                yield Quantity(Decimal(parsed), unit, text[start:stop], (start, stop))
        return
