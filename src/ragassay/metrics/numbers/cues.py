"""What a text can hold, read once and cheaply: which of the number reader's patterns can
match it at all, so that a pattern the text cannot need is not run.

Every cue is a necessary condition of its patterns (``True`` when unsure): a cue that is
``False`` proves the patterns find nothing. Most texts hold a few plain integers and no
date, clock time, identifier or number word, so most patterns are skipped. An ASCII text
(the common case) is read as bytes, where ``in``, ``translate`` and ``split`` are fast; any
other text gets the plain character checks.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .dates import DE_MONTH_WORDS, EN_MONTH_WORDS
from .words import DE_COMPOUND_PARTS, DE_STEMS, DE_WHOLE_WORDS, EN_NUMBER_WORDS

_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"\w+")
_ANY_HANGUL = re.compile("[\uac00-\ud7a3]")
_DE_STEMS_RE = re.compile("|".join(DE_STEMS))

# An ASCII text as bytes with every digit as "0" (so "\d-" is the substring "0-") ...
_ZERO_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)
# ... and lower-cased with every byte that is no letter as a blank: its split is the
# letter runs, the only words a word pattern bounded by ``\b`` or ``[^\W\d_]+`` can match.
_LETTER_RUNS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32
                     for c in range(256))


def _ascii_words(words: frozenset[str]) -> frozenset[bytes]:
    return frozenset(w.casefold().encode() for w in words if w.isascii())


_EN_WORDS = _ascii_words(EN_NUMBER_WORDS)
_DE_WORDS = _ascii_words(DE_WHOLE_WORDS)
_UND, _TAUSEND = (p.encode() for p in DE_COMPOUND_PARTS)
_DE_MONTHS = _ascii_words(DE_MONTH_WORDS)
_EN_MONTHS = _ascii_words(EN_MONTH_WORDS)
_WATCHED = _EN_WORDS | _DE_WORDS | _DE_MONTHS | _EN_MONTHS


class Cues(NamedTuple):
    """Which patterns a text can need (``\\d`` is any decimal digit, ``_`` a blank)."""

    digit: bool  # a digit: every numeral, date, clock time, mask
    iso: bool  # "\d{4}-\d": ISO dates
    slash: bool  # "\d{4}/\d": slashed dates
    dotted: bool  # "\d._?\d": dotted dates
    colon: bool  # "\d:\d": clock times
    phone: bool  # "\d-\d": phone numbers
    list_marker: bool  # "\d._" or "\d)_": list markers
    joined: bool  # "-\d" or "_\d": identifiers (SFR-003)
    wol: bool  # "월": Korean month dates
    nyeon: bool  # "년": Korean years
    si: bool  # "시": Korean clock times
    de_month: bool  # a German month name as a word
    any_month: bool  # a German or English month name as a word
    en_month: bool  # an English month name as a word
    english: bool  # an English number word as a word
    german_or_korean: bool  # a German number word, or Hangul

    @property
    def date(self) -> bool:
        """Whether any date pattern can match."""
        return (self.iso or self.slash or self.dotted or self.wol or self.nyeon
                or self.any_month)


def text_cues(text: str) -> Cues:
    """The cues of ``text`` (the folded text the patterns run on)."""
    if text.isascii():
        return _ascii_cues(text)
    digit = _DIGIT.search(text) is not None
    words = set(_WORD.findall(text)) if digit else set()
    de_month = not DE_MONTH_WORDS.isdisjoint(words)
    en_month = not EN_MONTH_WORDS.isdisjoint(words)
    dash = digit and "-" in text
    return Cues(
        digit, dash, digit and "/" in text, digit and "." in text, digit and ":" in text,
        dash, digit and ("." in text or ")" in text), digit and ("-" in text or "_" in text),
        digit and "월" in text, digit and "년" in text, digit and "시" in text,
        de_month, de_month or en_month, en_month, True,
        bool(_ANY_HANGUL.search(text) or _DE_STEMS_RE.search(text.casefold())),
    )


_NO_DIGIT = (False,) * 14  # the cues up to en_month of a text without a digit


def _ascii_cues(text: str) -> Cues:
    raw = text.encode("ascii")
    runs = raw.translate(_LETTER_RUNS)  # lower-cased: holds "und" where the text does
    hits = _WATCHED.intersection(runs.split())  # mostly empty
    english = bool(hits) and not _EN_WORDS.isdisjoint(hits)
    german = ((bool(hits) and not _DE_WORDS.isdisjoint(hits))
              or _UND in runs or _TAUSEND in runs)
    z = raw.translate(_ZERO_DIGITS)
    if b"0" not in z:
        return Cues(*_NO_DIGIT, english, german)
    dash, dot, paren = b"0-0" in z, b"0." in z, b"0)" in z
    # the lower-cased month test is the coarse one: the patterns want "May", not "may"
    de_month = bool(hits) and not _DE_MONTHS.isdisjoint(hits)
    en_month = bool(hits) and not _EN_MONTHS.isdisjoint(hits)
    return Cues(
        True, dash and b"0000-0" in z, b"0000/0" in z,
        dot and (b"0.0" in z or b"0. 0" in z or b"0.\t0" in z), b"0:0" in z, dash,
        (dot and (b"0. " in z or b"0.\t" in z)) or (paren and (b"0) " in z or b"0)\t" in z)),
        b"-0" in z or b"_0" in z, False, False, False,
        de_month, de_month or en_month, en_month, english, german,
    )
