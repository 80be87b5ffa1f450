"""`extract_numbers`: every number in a text, with what is masked as not a number."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from functools import lru_cache

from ...text import guess_language
from .cues import text_cues
from .dates import DATE_CUES, KO_CLOCK_RE, TIME_RE, find_dates, find_dates_reference
from .numerals import numeral_quantity, numeral_quantity_reference, numerals, numerals_reference
from .quantity import DATE, TIME, Quantity
from .units import HANGUL_RUN, is_ko_tail
from .words import word_quantities, word_quantities_reference

# --- masks ----------------------------------------------------------------------------

_IDENTIFIER_RE = re.compile(
    r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*[-_]\d[A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*"
)
_PHONE_RE = re.compile(r"(?<![\d-])\d+(?:-\d+){2,}(?![\d-])")
_LIST_MARKER_RE = re.compile(r"(?m)^[ \t]*(?:[-*•·▪][ \t]*)?(?:\d{1,2}[.)]|\(\d{1,2}\))(?=[ \t])")
_RANGE_GAP_RE = re.compile(r"[ \t]*(?:-|–|—|~|∼|〜|bis|to|or|oder|또는)[ \t]*", re.IGNORECASE)


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


def extract_numbers_reference(text: str) -> list[Quantity]:
    """The plain version of :func:`extract_numbers` (every pattern over the text, the
    language guessed first), kept as the reference its tests compare it with."""
    return list(_extract_reference(text))


def _fold_width(text: str) -> str:
    """NFKC per character where it keeps the length (``３，０００`` → ``3,000``, ``％`` →
    ``%``), so that spans found in the folded text index the original text too. A text
    in NFKC already (ASCII, most Korean) has no character that NFKC changes."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return "".join(f if len(f := unicodedata.normalize("NFKC", ch)) == 1 else ch
                   for ch in text)


@lru_cache(maxsize=32768)  # a run's distinct chunks, sentences and answers
def _extract(original: str) -> tuple[Quantity, ...]:
    """:func:`_extract_reference`'s numbers, fast: a pattern the text's cues rule out is
    not run, and the language is guessed only for a numeral whose reading needs it."""
    text = _fold_width(original)
    cues = text_cues(text)
    taken = _Spans()
    found: list[Quantity] = []

    def add(q: Quantity) -> None:
        if taken.free(*q.span):
            taken.take(*q.span)
            found.append(q)

    if cues.digit:
        if cues.date:
            wanted = [getattr(cues, name) for name in DATE_CUES]
            # the longest date wins where patterns overlap ("1 July 2026" over "July 2026")
            for q in sorted(find_dates(text, wanted),
                            key=lambda q: (q.span[0] - q.span[1], q.span[0])):
                add(q)
        if cues.colon:
            _add_times(text, add)
        if cues.si:
            _add_ko_clocks(text, add)
        for pattern, cue in ((_IDENTIFIER_RE, cues.joined), (_PHONE_RE, cues.phone),
                             (_LIST_MARKER_RE, cues.list_marker)):
            if cue:
                for m in pattern.finditer(text):
                    if taken.free(*m.span()):
                        taken.take(*m.span())

        def language() -> str:
            return guess_language(text)

        for m in numerals(text):
            if taken.free(*m.span()):
                numeral = numeral_quantity(text, m, language)
                if numeral is not None:
                    add(numeral)
                else:
                    taken.take(*m.span())
    if cues.english or cues.german_or_korean:
        for q in word_quantities(text, cues.english, cues.german_or_korean):
            add(q)
    found.sort(key=lambda q: q.span)
    shared = _share_range_units(text, found)
    if text is original:
        return tuple(shared)
    return tuple(replace(q, raw=original[q.span[0]:q.span[1]]) for q in shared)


def _extract_reference(original: str) -> tuple[Quantity, ...]:
    text = _fold_width(original)
    lang = guess_language(text)
    taken = _Spans()
    found: list[Quantity] = []

    def add(q: Quantity) -> None:
        if taken.free(*q.span):
            taken.take(*q.span)
            found.append(q)

    # the longest date wins where patterns overlap ("1 July 2026" over "July 2026")
    for q in sorted(find_dates_reference(text), key=lambda q: (q.span[0] - q.span[1], q.span[0])):
        add(q)
    _add_times(text, add)
    _add_ko_clocks(text, add)
    for pattern in (_IDENTIFIER_RE, _PHONE_RE, _LIST_MARKER_RE):
        for m in pattern.finditer(text):
            if taken.free(*m.span()):
                taken.take(*m.span())
    for m in numerals_reference(text):
        if taken.free(*m.span()):
            numeral = numeral_quantity_reference(text, m, lang)
            if numeral is not None:
                add(numeral)
            else:
                taken.take(*m.span())
    for q in word_quantities_reference(text):
        add(q)
    found.sort(key=lambda q: q.span)
    return tuple(replace(q, raw=original[q.span[0]:q.span[1]])
                 for q in _share_range_units(text, found))


def _add_times(text: str, add: Callable[[Quantity], None]) -> None:
    """Clock times ``09:00``, ``9:30:15``."""
    for m in TIME_RE.finditer(text):
        add(Quantity(Decimal(int(m.group(1)) * 100 + int(m.group(2))), TIME, m.group(),
                     m.span()))


def _add_ko_clocks(text: str, add: Callable[[Quantity], None]) -> None:
    """Korean clock times ``9시``, ``9시 30분``."""
    for m in KO_CLOCK_RE.finditer(text):
        tail = HANGUL_RUN.match(text, m.end())
        if not is_ko_tail(tail.group() if tail else ""):
            continue  # "3시스템" is no clock time
        add(Quantity(Decimal(int(m.group(1)) * 100 + int(m.group(2) or 0)), TIME, m.group(),
                     m.span()))


def _share_range_units(text: str, found: list[Quantity]) -> list[Quantity]:
    """``3-5 Tage``, ``3~5일``: the first number of a range takes the unit of the second."""
    out = list(found)
    for i in range(len(out) - 2, -1, -1):
        q, nxt = out[i], out[i + 1]
        if (q.unit is None and nxt.unit not in (None, DATE, TIME)
                and _RANGE_GAP_RE.fullmatch(text, q.span[1], nxt.span[0])):
            out[i] = Quantity(q.value, nxt.unit, q.raw, q.span, q.alternatives)
    return out
