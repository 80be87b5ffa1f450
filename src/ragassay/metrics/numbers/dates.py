"""Dates (numeric, Korean, German and English month names) and clock times in text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from decimal import Decimal

from .quantity import DATE, Quantity

# --- dates, times ------------------------------------------------------------------

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
TIME_RE = re.compile(r"(?<![\d:.])([01]?\d|2[0-4]):([0-5]\d)(?::[0-5]\d)?(?![\d:])")
KO_CLOCK_RE = re.compile(r"(?<![\d.,])(\d{1,2})시(?!간)(?:[ \t]*(\d{1,2})분)?")


def _month_number(name: str) -> int:
    return _DE_MONTHS.get(name) or _EN_MONTHS.get(name.rstrip("."), 0)


_DIGIT = re.compile(r"\d")


# What each pattern cannot match without (a pattern's month name is a whole ``\w+`` word:
# a word boundary or a blank on either side): a text without it skips the pattern.
EN_MONTH_WORDS = frozenset(_EN_MONTHS)
DE_MONTH_WORDS = frozenset(_DE_MONTHS)
_ANY_MONTH_WORDS = DE_MONTH_WORDS | EN_MONTH_WORDS
_NEEDS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("-", None), ("/", None), (".", None), (".", None), ("월", None), ("년", None),
    (".", DE_MONTH_WORDS), ("", _ANY_MONTH_WORDS), ("", EN_MONTH_WORDS),
    ("", EN_MONTH_WORDS))
# The same needs as fields of a text's cues (`cues.Cues`), pattern by pattern.
DATE_CUES = ("iso", "slash", "dotted", "dotted", "wol", "nyeon", "de_month", "any_month",
             "en_month", "en_month")
_WORDS = re.compile(r"\w+")


def find_dates(text: str, wanted: Sequence[bool] | None = None) -> Iterator[Quantity]:
    """Every date the patterns find in ``text`` (value ``yyyymmdd``, a missing part 0):
    :func:`find_dates_reference`'s dates, in its order. Fast because a pattern whose
    separator or month name the text lacks is not run (most texts hold no date at all).
    ``wanted`` (one flag per pattern, the text's cues named by :data:`DATE_CUES`) says
    which patterns can match; a pattern not wanted is not run."""
    if wanted is not None:
        for pattern, want in zip(_DATE_PATTERNS, wanted, strict=True):
            if want:
                yield from _dates_of(pattern, text)
        return
    if not _DIGIT.search(text):
        return  # every date pattern holds a digit
    words: set[str] | None = None
    for pattern, (char, months) in zip(_DATE_PATTERNS, _NEEDS, strict=True):
        if char not in text:
            continue
        if months is not None:
            if words is None:
                words = set(_WORDS.findall(text))
            if months.isdisjoint(words):
                continue
        yield from _dates_of(pattern, text)


def find_dates_reference(text: str) -> Iterator[Quantity]:
    """The plain version of :func:`find_dates` (every pattern over the text), kept as the
    reference its tests compare it with."""
    if not _DIGIT.search(text):
        return
    for pattern in _DATE_PATTERNS:
        yield from _dates_of(pattern, text)


def _dates_of(pattern: re.Pattern[str], text: str) -> Iterator[Quantity]:
    """The dates one of the patterns finds in ``text``."""
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
