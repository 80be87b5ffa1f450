"""Numbers in answers and sources, normalised so that "does the source hold this number?"
can be answered exactly (:func:`number_supported`).

:func:`extract_numbers` finds, in Korean, German and English text:

- numerals with decimal and thousands separators: ``3,000`` → 3000, ``1.000,50`` → 1000.5,
  ``99.5`` → 99.5, ``0,5`` → 0.5. A single separator followed by exactly three digits
  (``1.000``, ``3,000``) is ambiguous; the text's language picks the primary reading
  (German: ``.`` groups thousands and ``,`` is the decimal comma; Korean/English: the other
  way round) and the other reading is kept in ``Quantity.alternatives``, so a number is
  never failed only because the answer and its source were guessed to be in different
  languages (Korean text has no such ambiguity). ``1.2.3`` (a version or section number)
  and ``1,2,3`` are not numbers. Full-width digits and signs fold first (``３，０００`` =
  ``3,000``); the German price notation ``1.000,- €`` is 1000 €.
- units, attached or spaced, with Korean particles after them (``6개월간``, ``6개월의``):
  canonicalised to unit families (``5 Tage`` = ``5 days`` = ``5일`` → ``day``). Korean
  multipliers apply to the value: ``3,000만원`` = ``3천만원`` = 30,000,000 ``krw``;
  ``1억 5천만원`` = 150,000,000. ``3 Mio. €`` = 3,000,000 ``eur``.
- number words with the unit of the next word: German (``fünf``, ``vierundzwanzig``),
  English (``five``, ``twenty-four``), Korean native (``두 달``, ``열두 개월``), Korean day
  words (``하루``, ``이틀``, ``열흘``, ``보름``) and Sino-Korean (``삼개월``, ``일주일``).
  To avoid false positives, articles (``ein``/``eine``/``einen``…, ``one``) and Korean
  native numerals count only when a unit follows (``ein Jahr`` → 1 year, ``eine Frage`` →
  nothing); English ``a``/``an`` never count (``24 hours a day``). Sino-Korean numerals
  count only attached to ``개월``/``주일``/``년`` or before ``개월``; multi-syllable ones
  (``이십사 시간``) also before other time units: a lone ``이``/``일``/``사`` is far more
  often "this"/"work"/"company" than a number.
- dates, as their own kind (unit ``date``, value ``YYYYMMDD`` with 0 for a missing part):
  ``2026-07-01``, ``2026/07/01``, ``2026. 7. 1.``, ``01.07.2026``, ``2026년 7월 1일``,
  ``7월``, ``2026년``, ``1. Juli 2026``, ``July 1, 2026``. Clock times (``09:00``, ``9시
  30분``, ``9 Uhr``) are unit ``time``, value ``HHMM``.

Not numbers (so they cannot fail an answer): identifiers such as ``SFR-003``, ``COVID-19``,
``A4`` or ``2FA``; phone-like digit groups (``02-123-4567``); list markers at the start of a
line (``1.``, ``2)``, ``(3)``).

What the check still cannot see: numbers derived by arithmetic (a sum, "twice", a
percentage of an amount); ranges as a whole (``3-5 Tage`` is 3 and 5 days, each checked
alone); fractions and halves written as words (``half``, ``반``, ``anderthalb``); ordinals
(``1st``, ``dritte``, ``첫째``); unit conversion (``1 Jahr`` is not ``12 Monate``, ``1 GB``
is not ``1024 MB``); 12-hour clock (``6 pm`` vs ``18:00``, ``오후 6시``); and whether the
number belongs to the claim it is written in (a right number from the wrong clause passes).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache

from ..text import KO_SUFFIXES, guess_language

DATE = "date"
TIME = "time"


@dataclass(frozen=True)
class Quantity:
    """A number found in text.

    ``value`` is in the base unit (Korean/Latin multipliers applied); ``unit`` is a unit
    family (``day``, ``month``, ``percent``, ``eur``, ``date``, ...) or None; ``raw`` is the
    text as written (number and unit); ``span`` is ``(start, end)`` into the text;
    ``alternatives`` holds the other reading of an ambiguous numeral (``1.000``).
    """

    value: Decimal
    unit: str | None
    raw: str
    span: tuple[int, int]
    alternatives: tuple[Decimal, ...] = ()

    @property
    def values(self) -> tuple[Decimal, ...]:
        """Every reading of the numeral: the primary value first."""
        return (self.value, *self.alternatives)


# --- unit lexicon ---------------------------------------------------------------------

_KO_UNITS: dict[str, str] = {
    "개월": "month", "달": "month", "년": "year", "주일": "week", "주": "week",
    "영업일": "business_day", "근무일": "business_day", "일": "day",
    "시간": "hour", "분": "minute", "초": "second", "밀리초": "millisecond",
    "퍼센트포인트": "percentage_point", "퍼센트": "percent", "프로": "percent",
    "원": "krw", "달러": "usd", "유로": "eur",
    "명": "person", "인치": "inch", "인": "person", "개": "item", "건": "case",
    "회": "times", "번": "times", "배": "fold", "페이지": "page", "쪽": "page",
    "곳": "place", "개소": "place", "점": "point",
}
_SYMBOL_UNITS: dict[str, str] = {
    "%p": "percentage_point", "%": "percent", "€": "eur", "$": "usd", "₩": "krw", "£": "gbp",
}
# Latin-script unit words, case-insensitive; "," separates entries (some have spaces).
_LATIN_UNIT_WORDS: dict[str, str] = {
    "day": "day, days, tag, tage, tagen, tages, kalendertag, kalendertage, kalendertagen",
    "business_day": "business day, business days, working day, working days, workday, "
                    "workdays, werktag, werktage, werktagen, werktages, arbeitstag, "
                    "arbeitstage, arbeitstagen, geschäftstag, geschäftstage, geschäftstagen",
    "week": "week, weeks, woche, wochen",
    "month": "month, months, monat, monate, monaten, monats",
    "year": "year, years, yr, yrs, jahr, jahre, jahren, jahres",
    "hour": "hour, hours, hr, hrs, h, stunde, stunden, std",
    "minute": "minute, minutes, min, mins, minuten",
    "second": "second, seconds, sec, secs, sekunde, sekunden, sek",
    "millisecond": "ms, millisecond, milliseconds, millisekunde, millisekunden",
    "percent": "percent, per cent, pct, prozent",
    "percentage_point": "percentage point, percentage points, prozentpunkt, prozentpunkte",
    "eur": "eur, euro, euros",
    "usd": "usd, dollar, dollars",
    "krw": "krw, won",
    "gbp": "gbp",
    "person": "person, persons, people, personen",
    "item": "item, items, piece, pieces, stück, stk",
    "times": "times, mal",
    "page": "page, pages, seite, seiten",
    "point": "point, points, punkt, punkte, punkten",
    "kb": "kb, kilobyte, kilobytes",
    "mb": "mb, megabyte, megabytes",
    "gb": "gb, gigabyte, gigabytes",
    "tb": "tb, terabyte, terabytes",
    "mbps": "mbps",
    "gbps": "gbps",
    "km": "km",
    "cm": "cm",
    "mm": "mm",
    "kg": "kg",
    TIME: "uhr",
}
_LATIN_UNITS = {w.strip(): fam for fam, ws in _LATIN_UNIT_WORDS.items() for w in ws.split(",")}
_LATIN_UNIT_RE = re.compile(
    "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+")
                     for w in sorted(_LATIN_UNITS, key=lambda w: (-len(w), w))) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_KO_UNIT_LIST = sorted(_KO_UNITS, key=lambda w: (-len(w), w))
_SYMBOL_LIST = sorted(_SYMBOL_UNITS, key=lambda w: (-len(w), w))
_PREFIX_CURRENCY_RE = re.compile(r"(€|\$|₩|£|EUR|USD|KRW)[ \t]?$")
_PREFIX_FAMILY = {"€": "eur", "$": "usd", "₩": "krw", "£": "gbp", "EUR": "eur", "USD": "usd",
                  "KRW": "krw"}

# Words that may follow a Korean unit after a space-separated number ("3 개월간", "3 일 이내"):
# particles and a few postpositions. Used to reject "3 일반" (일반 = "general").
_KO_TAILS = tuple(sorted(set(KO_SUFFIXES) | set(
    "간 동안 이내 이상 이하 미만 초과 후 전 씩 내 뒤 안 정도 가량 쯤 간의 차".split()
), key=lambda s: (-len(s), s)))


def _is_ko_tail(rest: str) -> bool:
    """Whether ``rest`` (a Hangul run) is only particles/postpositions (or empty)."""
    while rest:
        for tail in _KO_TAILS:
            if rest.startswith(tail):
                rest = rest[len(tail):]
                break
        else:
            return False
    return True


_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]*")


_GAP_RE = re.compile(r"[ \t\u00a0]*")


def _match_unit(text: str, pos: int) -> tuple[str | None, int]:
    """The unit family starting at ``pos`` (after optional blanks or a hyphen) and the
    end of the unit, or ``(None, pos)``."""
    gap = _GAP_RE.match(text, pos)
    gap_end = gap.end() if gap else pos
    spaced = gap_end > pos
    for sym in _SYMBOL_LIST:
        if text.startswith(sym, gap_end):
            return _SYMBOL_UNITS[sym], gap_end + len(sym)
    for word in _KO_UNIT_LIST:
        if text.startswith(word, gap_end):
            end = gap_end + len(word)
            tail = _HANGUL_RUN.match(text, end)
            if not spaced or _is_ko_tail(tail.group() if tail else ""):
                return _KO_UNITS[word], end
            break
    start = gap_end
    if not spaced and text.startswith("-", pos):  # "24-hour", "30-day"
        start = pos + 1
    m = _LATIN_UNIT_RE.match(text, start)
    if m:
        return _LATIN_UNITS[re.sub(r"\s+", " ", m.group().casefold())], m.end()
    return None, pos


# --- numerals -------------------------------------------------------------------------

_NUMERAL_RE = re.compile(r"(?<![^\W\uac00-\ud7a3]|[.,])\d+(?:[.,]\d+)*")


def parse_numeral(s: str, lang: str = "en") -> tuple[Decimal, tuple[Decimal, ...]] | None:
    """The value of a digit string with ``.``/``,`` separators and its alternative reading.

    ``"3,000"`` → 3000 (alt 3.000 — German decimal comma), ``"1.000,50"`` → 1000.50,
    ``"99.5"`` → 99.5, ``"0,5"`` → 0.5; ``"1.000"`` → 1.000 (alt 1000), or 1000 (alt 1.000)
    when ``lang == "de"``. ``"1.2.3"``, ``"1,2,3"`` and ``"1.000,5.0"`` → None.
    """
    groups = re.split(r"[.,]", s)
    seps = [c for c in s if c in ".,"]
    if not seps:
        return Decimal(s), ()
    first_ok = 1 <= len(groups[0]) <= 3
    if len(set(seps)) == 2:
        grouping, dec = seps[:-1], seps[-1]
        if (first_ok and len(set(grouping)) == 1 and grouping[0] != dec
                and all(len(g) == 3 for g in groups[1:-1])):
            return Decimal("".join(groups[:-1]) + "." + groups[-1]), ()
        return None
    if len(seps) >= 2:
        if first_ok and all(len(g) == 3 for g in groups[1:]):
            return Decimal("".join(groups)), ()
        return None
    a, b = groups
    as_decimal = Decimal(a + "." + b)
    if len(b) != 3 or not first_ok or not a.strip("0"):
        return as_decimal, ()
    as_thousands = Decimal(a + b)
    if lang == "ko":  # Korean writes "3,000" for three thousand and "1.5" for decimals only
        return (as_thousands, ()) if seps[0] == "," else (as_decimal, ())
    if (seps[0] == ".") == (lang == "de"):
        return as_thousands, (as_decimal,)
    return as_decimal, (as_thousands,)


_KO_SMALL = {"천": 1000, "백": 100}
_KO_BIG = {"만": 10**4, "억": 10**8, "조": 10**12}
_KO_MULT_RE = re.compile(r"([천백])?([만억조])?")
_KO_NEXT_SEGMENT_RE = re.compile(r"[ \t]*(\d+(?:,\d{3})*)([천백])?([만억])?")
_LATIN_MULT_RE = re.compile(
    r"[ \t]+(Mio\.?|Millionen|Million|millions?|Mrd\.?|Milliarden|Milliarde|billions?|"
    r"Tsd\.?|thousand|Tausend)(?![^\W\d_])"
)
_LATIN_MULT = {"mio": 10**6, "million": 10**6, "millionen": 10**6, "millions": 10**6,
               "mrd": 10**9, "milliarde": 10**9, "milliarden": 10**9, "billion": 10**9,
               "billions": 10**9, "tsd": 1000, "thousand": 1000, "tausend": 1000}


def _ko_multiplier(text: str, pos: int) -> tuple[int, int, int]:
    """Korean multiplier attached at ``pos``: ``(multiplier, big_unit, end)``."""
    m = _KO_MULT_RE.match(text, pos)
    small, big = (m.group(1), m.group(2)) if m else (None, None)
    if big == "조" and not text.startswith("원", m.end() if m else pos):
        big = None  # "제3조" is Article 3, not 3 trillion
    mult = _KO_SMALL.get(small or "", 1) * _KO_BIG.get(big or "", 1)
    end = pos + len(small or "") + len(big or "")
    return mult, _KO_BIG.get(big or "", 1), end


def _numeral_at(text: str, m: re.Match[str], lang: str) -> tuple[Decimal, tuple[Decimal, ...],
                                                                  int] | None:
    """Value, alternatives and end of the numeral ``m`` with its multipliers."""
    parsed = parse_numeral(m.group(), lang)
    if parsed is None:
        return None
    value, alts = parsed
    if text.startswith((",-", ",–"), m.end()):  # German price notation "1.000,- €"
        return value, alts, m.end() + 2
    mult, big, end = _ko_multiplier(text, m.end())
    if mult > 1:
        value, alts = value * mult, tuple(a * mult for a in alts)
        # "1억 5천만원": add smaller segments that follow a big unit
        while big > 1:
            nxt = _KO_NEXT_SEGMENT_RE.match(text, end)
            if not nxt or not (nxt.group(2) or nxt.group(3)):
                break
            seg_mult = _KO_SMALL.get(nxt.group(2) or "", 1) * _KO_BIG.get(nxt.group(3) or "", 1)
            if seg_mult >= big:
                break
            add = Decimal(nxt.group(1).replace(",", "")) * seg_mult
            value, alts = value + add, tuple(a + add for a in alts)
            big, end = _KO_BIG.get(nxt.group(3) or "", 1), nxt.end()
        return value, alts, end
    lm = _LATIN_MULT_RE.match(text, end)
    if lm:
        factor = _LATIN_MULT[lm.group(1).rstrip(".").casefold()]
        return value * factor, tuple(a * factor for a in alts), lm.end()
    return value, alts, end


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
    gap = _GAP_RE.match(text, pos)
    start = gap.end() if (gap and allow_space) else pos
    for word in sorted(counters, key=lambda w: (-len(w), w)):
        if text.startswith(word, start):
            end = start + len(word)
            tail = _HANGUL_RUN.match(text, end)
            if _is_ko_tail(tail.group() if tail else ""):
                return counters[word], end
    return None


# --- dates, times, masks --------------------------------------------------------------

_EN_MONTHS = {m: i for i, ms in enumerate(
    ["Jan January", "Feb February", "Mar March", "Apr April", "May", "Jun June", "Jul July",
     "Aug August", "Sep Sept September", "Oct October", "Nov November", "Dec December"], 1)
    for m in ms.split()}
_DE_MONTHS = {m: i for i, ms in enumerate(
    ["Januar Jänner", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
     "September", "Oktober", "November", "Dezember"], 1) for m in ms.split()}
_EN_MONTH_ALT = "|".join(sorted(_EN_MONTHS, key=len, reverse=True))
_DE_MONTH_ALT = "|".join(sorted(_DE_MONTHS, key=len, reverse=True))

_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![\d.])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)"),
    re.compile(r"(?<![\d.])(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})(?!\d)"),
    re.compile(r"(?<![\d.])(?P<y>\d{4})\.[ \t]?(?P<m>\d{1,2})\.[ \t]?(?P<d>\d{1,2})(?!\d)\.?"),
    re.compile(r"(?<![\d.])(?P<d>\d{1,2})\.[ \t]?(?P<m>\d{1,2})\.[ \t]?(?P<y>\d{4})(?!\d)"),
    re.compile(r"(?<!\d)(?:(?P<y>\d{4})[ \t]*년[ \t]*)?(?P<m>\d{1,2})[ \t]*월"
                r"(?:[ \t]*(?P<d>\d{1,2})[ \t]*일)?"),
    re.compile(r"(?<!\d)(?P<y>(?:19|20|21)\d{2})[ \t]*년(?!\s*(?:간|동안))"),
    re.compile(rf"(?<!\d)(?P<d>\d{{1,2}})\.[ \t]*(?P<m>{_DE_MONTH_ALT})\b"
               rf"(?:[ \t]+(?P<y>\d{{4}}))?"),
    re.compile(rf"\b(?P<m>{_DE_MONTH_ALT}|{_EN_MONTH_ALT})\.?[ \t]+(?P<y>\d{{4}})\b"),
    re.compile(rf"\b(?P<m>{_EN_MONTH_ALT})\.?[ \t]+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
                rf"(?:,?[ \t]+(?P<y>\d{{4}})\b)?"),
    re.compile(rf"(?<!\d)(?P<d>\d{{1,2}})(?:st|nd|rd|th)?[ \t]+(?:of[ \t]+)?"
                rf"(?P<m>{_EN_MONTH_ALT})\b(?:,?[ \t]+(?P<y>\d{{4}})\b)?"),
)
_TIME_RE = re.compile(r"(?<![\d:.])([01]?\d|2[0-4]):([0-5]\d)(?::[0-5]\d)?(?![\d:])")
_KO_CLOCK_RE = re.compile(r"(?<![\d.,])(\d{1,2})시(?!간)(?:[ \t]*(\d{1,2})분)?")
_IDENTIFIER_RE = re.compile(
    r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_]\d[A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*"
)
_PHONE_RE = re.compile(r"(?<![\d-])\d+(?:-\d+){2,}(?![\d-])")
_LIST_MARKER_RE = re.compile(r"(?m)^[ \t]*(?:[-*•·▪][ \t]*)?(?:\d{1,2}[.)]|\(\d{1,2}\))(?=[ \t])")
_LATIN_LETTERS = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_RANGE_GAP_RE = re.compile(r"[ \t]*(?:-|–|—|~|∼|〜|bis|to|or|oder|또는)[ \t]*", re.IGNORECASE)


def _month_number(name: str) -> int:
    return _DE_MONTHS.get(name) or _EN_MONTHS.get(name.rstrip("."), 0)


def _dates(text: str) -> Iterator[Quantity]:
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            parts = m.groupdict()
            y = int(parts.get("y") or 0)
            mon_raw = parts.get("m") or "0"
            mon = int(mon_raw) if mon_raw.isdigit() else _month_number(mon_raw)
            d = int(parts.get("d") or 0)
            if not (0 <= mon <= 12 and 0 <= d <= 31) or (mon == 0 and d):
                continue
            if not y and not mon:
                continue
            yield Quantity(Decimal(y * 10000 + mon * 100 + d), DATE, m.group().strip(),
                           (m.start(), m.start() + len(m.group().rstrip())))


def _date_parts(value: Decimal) -> tuple[int, int, int]:
    v = int(value)
    return v // 10000, v // 100 % 100, v % 100


class _Spans:
    """Disjoint character ranges already claimed by a date, an identifier or a number,
    kept sorted so that a lookup is a binary search."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def free(self, a: int, b: int) -> bool:
        i = bisect.bisect_left(self._spans, (a, b))
        before_ok = i == 0 or self._spans[i - 1][1] <= a
        after_ok = i == len(self._spans) or self._spans[i][0] >= b
        return before_ok and after_ok

    def take(self, a: int, b: int) -> None:
        bisect.insort(self._spans, (a, b))


# --- extraction -----------------------------------------------------------------------


def extract_numbers(text: str) -> list[Quantity]:
    """Every number in ``text`` (see the module docstring), ordered by position."""
    return list(_extract(text))


def _fold_width(text: str) -> str:
    """NFKC per character where it keeps the length (``３，０００`` → ``3,000``, ``％`` →
    ``%``), so that spans found in the folded text index the original text too."""
    return "".join(f if len(f := unicodedata.normalize("NFKC", ch)) == 1 else ch
                   for ch in text)


@lru_cache(maxsize=4096)
def _extract(original: str) -> tuple[Quantity, ...]:
    text = _fold_width(original)
    lang = guess_language(text)
    taken = _Spans()
    found: list[Quantity] = []

    def add(q: Quantity) -> None:
        if taken.free(*q.span):
            taken.take(*q.span)
            found.append(q)

    # the longest date wins where patterns overlap ("1 July 2026" over "July 2026")
    for q in sorted(_dates(text), key=lambda q: (q.span[0] - q.span[1], q.span[0])):
        add(q)
    for m in _TIME_RE.finditer(text):
        add(Quantity(Decimal(int(m.group(1)) * 100 + int(m.group(2))), TIME, m.group(),
                     m.span()))
    for m in _KO_CLOCK_RE.finditer(text):
        tail = _HANGUL_RUN.match(text, m.end())
        if not _is_ko_tail(tail.group() if tail else ""):
            continue  # "3시스템" is no clock time
        add(Quantity(Decimal(int(m.group(1)) * 100 + int(m.group(2) or 0)), TIME, m.group(),
                     m.span()))
    for pattern in (_IDENTIFIER_RE, _PHONE_RE, _LIST_MARKER_RE):
        for m in pattern.finditer(text):
            if taken.free(*m.span()):
                taken.take(*m.span())
    for m in _NUMERAL_RE.finditer(text):
        if taken.free(*m.span()):
            q = _numeral_quantity(text, m, lang)
            if q is not None:
                add(q)
            else:
                taken.take(*m.span())
    for q in _word_quantities(text):
        add(q)
    found.sort(key=lambda q: q.span)
    return tuple(replace(q, raw=original[q.span[0]:q.span[1]])
                 for q in _share_range_units(text, found))


def _numeral_quantity(text: str, m: re.Match[str], lang: str) -> Quantity | None:
    parsed = _numeral_at(text, m, lang)
    if parsed is None:
        return None
    value, alts, end = parsed
    unit, unit_end = _match_unit(text, end)
    if unit is None and end == m.end():
        glued = _LATIN_LETTERS.match(text, end)
        if glued:  # "2FA", "5G", "1st": an identifier or ordinal, not a quantity
            return None
    if unit == TIME:  # "9 Uhr", "9.30 Uhr"
        hours, _, minutes = m.group().replace(",", ".").partition(".")
        value, alts = Decimal(int(hours) * 100 + int(minutes or 0)), ()
    start = m.start()
    if unit is None:
        window = text[max(0, start - 4) : start]
        pre = _PREFIX_CURRENCY_RE.search(window)
        if pre:
            unit, start = _PREFIX_FAMILY[pre.group(1)], start - len(window) + pre.start()
    end = unit_end if unit_end > end else end
    return Quantity(value, unit, text[start:end], (start, end), alts)


def _word_quantities(text: str) -> Iterator[Quantity]:
    """German, English and Korean number words; articles and Korean native numerals only
    with a unit after them."""
    for m in _EN_RUN_RE.finditer(text):
        value, needs_unit = _english_run(m.group())
        q = _word_quantity(text, m.start(), m.end(), value, needs_unit)
        if q:
            yield q
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
    unit, unit_end = _match_unit(text, end)
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
        if run.startswith(word) and _is_ko_tail(run[len(word):]):
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
        value = _sino_value(run[:n])
        if value is None:
            continue
        rest = run[n:]
        attached = next((u for u in _SINO_ATTACHED if rest.startswith(u)), None)
        if attached and _is_ko_tail(rest[len(attached):]):
            stop = start + n + len(attached)
            yield Quantity(Decimal(value), _SINO_SPACED[attached], text[start:stop],
                           (start, stop))
            return
        if not rest:
            counters = _SINO_SPACED if n >= 2 else {"개월": "month"}
            counter = _counter_at(text, end, counters)
            if counter and end < len(text) and text[end] in " \t":
                unit, stop = counter
                yield Quantity(Decimal(value), unit, text[start:stop], (start, stop))
        return


def _share_range_units(text: str, found: list[Quantity]) -> list[Quantity]:
    """``3-5 Tage``, ``3~5일``: the first number of a range takes the unit of the second."""
    out = list(found)
    for i in range(len(out) - 2, -1, -1):
        q, nxt = out[i], out[i + 1]
        if (q.unit is None and nxt.unit not in (None, DATE, TIME)
                and _RANGE_GAP_RE.fullmatch(text, q.span[1], nxt.span[0])):
            out[i] = Quantity(q.value, nxt.unit, q.raw, q.span, q.alternatives)
    return out


# --- support --------------------------------------------------------------------------


def _date_covers(source: Decimal, answer: Decimal) -> bool:
    """An answer date is covered by a source date when every part it names matches; a year
    the source does not name is not held against it (``7월 1일`` in a 2026 schedule)."""
    matched = False
    for i, (s, a) in enumerate(zip(_date_parts(source), _date_parts(answer), strict=True)):
        if a == 0:
            continue
        if s == a:
            matched = True
        elif not (i == 0 and s == 0):
            return False
    return matched


def _supports(src: Quantity, q: Quantity) -> bool:
    if q.unit == DATE:
        return src.unit == DATE and _date_covers(src.value, q.value)
    if q.unit == TIME or src.unit == TIME:
        return q.unit == src.unit and q.value == src.value
    if src.unit == DATE:  # "2026" or "7" as a part of a source date
        return q.unit is None and any(Decimal(p) == v for p in _date_parts(src.value) if p
                                      for v in q.values)
    # An ambiguous answer numeral ("1.000") may match any reading of the source's; an
    # unambiguous one must equal the source's primary reading ("1" is not in "1.000 Euro").
    if not (q.value == src.value
            or (q.alternatives and any(a == b for a in q.values for b in src.values))):
        return False
    return q.unit is None or src.unit is None or q.unit == src.unit


def number_supported(q: Quantity, source_quantities: Sequence[Quantity]) -> bool:
    """Whether the source holds the answer's number ``q``.

    Values compare exactly, as Decimals (``99.5`` = ``99.50``). An ambiguous answer
    numeral (``1.000``) matches any reading of the source's; an unambiguous one must equal
    the source's primary reading (``1 Euro`` is not in German ``1.000 Euro``). When both
    have a unit, the unit families must match (``5 Tage`` is not supported by ``5 €``). An
    answer number without a unit is supported by any equal value. An answer number with a
    unit is also supported by an equal source value *without* a unit: the lenient choice,
    because a source table often puts the unit in a header the chunk does not repeat.
    Dates match dates part by part (a bare ``2026`` is supported by ``2026-07-01``); clock
    times match clock times only.
    """
    return any(_supports(src, q) for src in source_quantities)
