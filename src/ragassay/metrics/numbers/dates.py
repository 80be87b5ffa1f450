"""Dates (numeric, Korean, German and English month names) and clock times in text."""

from __future__ import annotations

import re
from collections.abc import Iterator
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


def find_dates(text: str) -> Iterator[Quantity]:
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
