"""The unit lexicon (Korean, Latin-script and symbol units to unit families) and its matcher."""

from __future__ import annotations

import re

from ...text import KO_SUFFIXES
from .quantity import TIME

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
# _LATIN_UNIT_RE cut by first letter (each part keeps the pattern's order): an ASCII
# character starts a match only of the words whose first letter it is, in either case.
_LATIN_UNIT_BY_FIRST = {
    first: re.compile(
        "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+")
                         for w in sorted(_LATIN_UNITS, key=lambda w: (-len(w), w))
                         if w[0].lower() == first) + r")(?![^\W\d_])",
        re.IGNORECASE)
    for first in sorted({w[0].lower() for w in _LATIN_UNITS})
}
_KO_UNIT_LIST = sorted(_KO_UNITS, key=lambda w: (-len(w), w))
_SYMBOL_LIST = sorted(_SYMBOL_UNITS, key=lambda w: (-len(w), w))
PREFIX_CURRENCY_RE = re.compile(r"(€|\$|₩|£|EUR|USD|KRW)[ \t]?$")
PREFIX_FAMILY = {"€": "eur", "$": "usd", "₩": "krw", "£": "gbp", "EUR": "eur", "USD": "usd",
                  "KRW": "krw"}

# Words that may follow a Korean unit after a space-separated number ("3 개월간", "3 일 이내"):
# particles and a few postpositions. Used to reject "3 일반" (일반 = "general").
_KO_TAILS = tuple(sorted(set(KO_SUFFIXES) | set(
    "간 동안 이내 이상 이하 미만 초과 후 전 씩 내 뒤 안 정도 가량 쯤 간의 차".split()
), key=lambda s: (-len(s), s)))


def is_ko_tail(rest: str) -> bool:
    """Whether ``rest`` (a Hangul run) is only particles/postpositions (or empty)."""
    while rest:
        for tail in _KO_TAILS:
            if rest.startswith(tail):
                rest = rest[len(tail):]
                break
        else:
            return False
    return True


HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]*")


GAP_RE = re.compile(r"[ \t\u00a0]*")


# The characters a symbol or Korean unit can start with.
_SYMBOL_FIRST = frozenset(s[0] for s in _SYMBOL_UNITS)
_KO_FIRST = frozenset(w[0] for w in _KO_UNITS)
_BLANKS = " \t\u00a0"  # GAP_RE's


def match_unit(text: str, pos: int) -> tuple[str | None, int]:
    """The unit family starting at ``pos`` (after optional blanks or a hyphen) and the
    end of the unit, or ``(None, pos)``: :func:`match_unit_reference`'s answer.

    Hand-written: the reference tries every symbol and Korean unit and the whole Latin
    pattern after every number (0.3 s on a 6,000-question run); here a lexicon is tried
    only when the next character can start one of its units, and of the Latin words only
    those with that first letter."""
    gap_end, n = pos, len(text)
    while gap_end < n and text[gap_end] in _BLANKS:
        gap_end += 1
    spaced = gap_end > pos
    first = text[gap_end:gap_end + 1]
    if first in _SYMBOL_FIRST:
        for sym in _SYMBOL_LIST:
            if text.startswith(sym, gap_end):
                return _SYMBOL_UNITS[sym], gap_end + len(sym)
    if first in _KO_FIRST:
        for word in _KO_UNIT_LIST:
            if text.startswith(word, gap_end):
                end = gap_end + len(word)
                tail = HANGUL_RUN.match(text, end)
                if not spaced or is_ko_tail(tail.group() if tail else ""):
                    return _KO_UNITS[word], end
                break
    start = gap_end
    if not spaced and text.startswith("-", pos):  # "24-hour", "30-day"
        start = pos + 1
    first = text[start:start + 1]
    if first.isascii():
        pattern = _LATIN_UNIT_BY_FIRST.get(first.lower())
    else:
        pattern = _LATIN_UNIT_RE
    if pattern is not None:
        m = pattern.match(text, start)
        if m:
            return _LATIN_UNITS[re.sub(r"\s+", " ", m.group().casefold())], m.end()
    return None, pos


def match_unit_reference(text: str, pos: int) -> tuple[str | None, int]:
    """The plain version of :func:`match_unit` (every lexicon tried), kept as the
    reference its tests compare it with."""
    gap = GAP_RE.match(text, pos)
    gap_end = gap.end() if gap else pos
    spaced = gap_end > pos
    for sym in _SYMBOL_LIST:
        if text.startswith(sym, gap_end):
            return _SYMBOL_UNITS[sym], gap_end + len(sym)
    for word in _KO_UNIT_LIST:
        if text.startswith(word, gap_end):
            end = gap_end + len(word)
            tail = HANGUL_RUN.match(text, end)
            if not spaced or is_ko_tail(tail.group() if tail else ""):
                return _KO_UNITS[word], end
            break
    start = gap_end
    if not spaced and text.startswith("-", pos):  # "24-hour", "30-day"
        start = pos + 1
    m = _LATIN_UNIT_RE.match(text, start)
    if m:
        return _LATIN_UNITS[re.sub(r"\s+", " ", m.group().casefold())], m.end()
    return None, pos
