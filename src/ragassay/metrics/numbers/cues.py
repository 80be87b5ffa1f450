"""What a text can hold, read once and cheaply: which of the number reader's patterns can
match it at all, so that a pattern the text cannot need is not run.

Every cue is a necessary condition of its patterns (``True`` when unsure): a cue that is
``False`` proves the patterns find nothing. Most texts hold a few plain integers and no
date, clock time, identifier or number word, so most patterns are skipped. An ASCII text
(the common case) is read as bytes, where ``in`` and ``translate`` are fast; any other text
gets the plain character checks.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .dates import DE_MONTH_WORDS, EN_MONTH_WORDS
from .words import DE_STEMS, EN_NUMBER_WORDS

_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"\w+")
_ANY_HANGUL = re.compile("[\uac00-\ud7a3]")
_DE_STEMS_RE = re.compile("|".join(DE_STEMS))

# An ASCII text as bytes with every digit as "0" (so "\d-" is the substring "0-") ...
_ZERO_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)
# ... and lower-cased with every byte that is no letter as a blank (its split: the letter
# runs, the words a ``\b``-bounded word pattern can match).
_LETTER_RUNS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32
                     for c in range(256))
_ASCII_DE_STEMS = tuple(s.encode() for s in DE_STEMS if s.isascii())
_EN_WORDS_B = frozenset(w.encode() for w in EN_NUMBER_WORDS)
_DE_MONTHS_B = frozenset(m.casefold().encode() for m in DE_MONTH_WORDS if m.isascii())
_EN_MONTHS_B = frozenset(m.casefold().encode() for m in EN_MONTH_WORDS)


class Cues(NamedTuple):
    """Which patterns a text can need (``\\d`` is any decimal digit)."""

    digit: bool  # a digit: every numeral, date, clock time, mask
    dash: bool  # "\d-": ISO dates, phone numbers
    slash: bool  # "\d/": slashed dates
    dot: bool  # "\d.": dotted dates, German dates, list markers
    colon: bool  # "\d:": clock times
    paren: bool  # "\d)": list markers
    joined: bool  # "-\d" or "_\d": identifiers (SFR-003)
    wol: bool  # "월": Korean month dates
    nyeon: bool  # "년": Korean years
    si: bool  # "시": Korean clock times
    de_month: bool  # a German month name as a word
    any_month: bool  # a German or English month name as a word
    en_month: bool  # an English month name as a word
    english: bool  # an English number word as a word
    german_or_korean: bool  # a German number word's part, or Hangul


def text_cues(text: str) -> Cues:
    """The cues of ``text`` (the folded text the patterns run on)."""
    if text.isascii():
        return _ascii_cues(text)
    digit = _DIGIT.search(text) is not None
    words = set(_WORD.findall(text)) if digit else set()
    de_month = not DE_MONTH_WORDS.isdisjoint(words)
    en_month = not EN_MONTH_WORDS.isdisjoint(words)
    return Cues(
        digit=digit, dash=digit and "-" in text, slash=digit and "/" in text,
        dot=digit and "." in text, colon=digit and ":" in text,
        paren=digit and ")" in text, joined=digit and ("-" in text or "_" in text),
        wol=digit and "월" in text, nyeon=digit and "년" in text, si=digit and "시" in text,
        de_month=de_month, any_month=de_month or en_month, en_month=en_month,
        english=True,
        german_or_korean=bool(_ANY_HANGUL.search(text) or _DE_STEMS_RE.search(text.casefold())),
    )


def _ascii_cues(text: str) -> Cues:
    raw = text.encode("ascii")
    runs = set(raw.translate(_LETTER_RUNS).split())
    lowered = raw.lower()
    zeroed = raw.translate(_ZERO_DIGITS)
    digit = b"0" in zeroed
    # a month name only counts beside a digit; the lower-cased test is the coarse one
    # (the date finder checks the exact, case-sensitive word)
    de_month = digit and not _DE_MONTHS_B.isdisjoint(runs)
    en_month = digit and not _EN_MONTHS_B.isdisjoint(runs)
    return Cues(
        digit=digit, dash=b"0-" in zeroed, slash=b"0/" in zeroed, dot=b"0." in zeroed,
        colon=b"0:" in zeroed, paren=b"0)" in zeroed,
        joined=b"-0" in zeroed or b"_0" in zeroed,
        wol=False, nyeon=False, si=False,
        de_month=de_month, any_month=de_month or en_month, en_month=en_month,
        english=not _EN_WORDS_B.isdisjoint(runs),
        german_or_korean=any(stem in lowered for stem in _ASCII_DE_STEMS),
    )
