"""Sentence spans of a text: where Korean, German and English sentences end, by small
explicit rules (see :func:`split_sentences`), so that callers can cite or quote exact text.
Every reader imports it from :mod:`ragassay.text`, which re-exports it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

# Hangul syllables and jamo (the range ragassay.text reads as Korean)
_HANGUL_RE = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def _is_hangul(ch: str) -> bool:
    return bool(_HANGUL_RE.match(ch))


_LINE_RE = re.compile(r"[^\n\r]+")
_CLOSERS = "\"')]}»”’」』›"
_ALWAYS_END = "。！？"
_END = ".!?…" + _ALWAYS_END
# Compared lowercased, without the final period: "z.B." → "z.b".
ABBREVIATIONS = frozenset(
    """z.b e.g i.e u.a d.h bzw ca usw vgl ggf inkl zzgl evtl nr no dr prof mr mrs ms st abs art
    ziff bzgl sog max min mind approx vs fig abb tab kap pp vol ed al""".split()
)
_ENUM_RE = re.compile(r"\s*(?:[-*•·▪○●□■※]\s*)?(?:\d+\.)*\d+")
_KO_DATE_TAIL = re.compile(r"\d{4}\.\s*\d{1,2}\.\s*\d{1,2}$")
_MONTH_AHEAD = re.compile(
    r"(?:Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November"
    r"|Dezember)\b"
)
_ABBR_TAIL = re.compile(r"[A-Za-z\u00c0-\u024f.]+$")


def _is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|")


_WINDOW = 32


def _period_ends_sentence(text: str, i: int, line_start: int) -> bool:
    """Whether the single ``.`` at ``text[i]`` may end a sentence (the caller has checked
    what follows it): not an abbreviation, initial, list number or Korean date."""
    # bounded windows around the period keep splitting linear in the text length
    before = text[max(line_start, i - _WINDOW) : i]
    rest = text[i + 1 : i + 1 + _WINDOW].lstrip(" \t")
    if rest[:1].islower() or _MONTH_AHEAD.match(rest):
        return False  # "3. und", "am 1. Juli": sentences do not start lowercase
    if before and before[-1].isdigit():
        at_line_start = i - line_start <= _WINDOW and _ENUM_RE.fullmatch(before)
        if at_line_start or _KO_DATE_TAIL.search(before):
            return False
        if rest[:1].isdigit():  # "2026. 7. 1" and other dotted numbers
            return False
    m = _ABBR_TAIL.search(before)
    if m:
        word = m.group().strip(".").lower()
        if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return False
    return True


# A run of sentence-ending marks and the closing quotes or brackets after it.
_END_RUN = re.compile(f"[{re.escape(_END)}]+[{re.escape(_CLOSERS)}]*")
_ALWAYS_END_SET = frozenset(_ALWAYS_END)


def _sentence_ends(text: str, start: int, end: int) -> list[int]:
    """Offsets (exclusive) where sentences end inside the line ``text[start:end]``, but
    for its end, where the line ends them anyway (:func:`_sentence_ends_reference` may
    give it: the spans are the same)."""
    # Jumps from run to run of end marks (the reference steps through every character:
    # 0.8 s of a 6,000-question run); each run is judged the same way.
    ends: list[int] = []
    for m in _END_RUN.finditer(text, start, end):
        i, j = m.span()
        if j == end:  # the line's last run: a cut there would split off nothing
            break
        run = m.group()
        if not _ALWAYS_END_SET.isdisjoint(run):
            ends.append(j)
            continue
        nxt = text[j] if j < end else ""
        if nxt and not nxt.isspace():  # not spaced: ends only a Korean run-on
            if not (i > start and _is_hangul(nxt) and _is_hangul(text[i - 1])):
                continue
        if run.rstrip(_CLOSERS) != "." or _period_ends_sentence(text, i, start):
            ends.append(j)
    return ends


def _sentence_ends_reference(text: str, start: int, end: int) -> list[int]:
    """The plain :func:`_sentence_ends`, character by character."""
    ends: list[int] = []
    i = start
    while i < end:
        ch = text[i]
        if ch not in _END:
            i += 1
            continue
        j = i
        while j < end and text[j] in _END:
            j += 1
        while j < end and text[j] in _CLOSERS:
            j += 1
        nxt = text[j] if j < end else ""
        prev = text[i - 1] if i > start else ""
        always = any(c in _ALWAYS_END for c in text[i:j])
        spaced = nxt == "" or nxt.isspace()
        korean_runon = nxt != "" and _is_hangul(nxt) and prev != "" and _is_hangul(prev)
        single_period = text[i:j].rstrip(_CLOSERS) == "."
        if always or ((spaced or korean_runon)
                      and (not single_period or _period_ends_sentence(text, i, start))):
            ends.append(j)
        i = j
    return ends


def _strip_span(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


_HAS_WORD = re.compile(r"\w")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` into ``text``, in order, stripped of whitespace.

    A sentence ends at a newline, or after ``.``/``!``/``?``/``…`` followed by whitespace or
    the end of the line (or directly by Hangul after Hangul, ``한다.다음``), and always after
    ``。！？``. A period does not end a sentence inside a number (``99.5``, ``1.2.3``), after a
    list number at the start of a line (``1.``), inside a Korean date (``2026. 7. 1.``),
    after an abbreviation (``z.B.``, ``e.g.``, ``Nr.``) or a single-letter initial. Table
    lines (starting with ``|``) are one sentence each. Spans without any word character
    (``---``, a lone bullet) are dropped.
    """
    return list(_sentence_spans(text))


# Cached: a chunk is split by every question that retrieves it (the answerer, the claim
# checks), an answer by each check that reads it.
@lru_cache(maxsize=1 << 14)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(_split(text, _sentence_ends))


def split_sentences_reference(text: str) -> list[tuple[int, int]]:
    """The plain :func:`split_sentences` (its differential test compares the two)."""
    return _split(text, _sentence_ends_reference)


def _split(text: str, sentence_ends: Callable[[str, int, int], list[int]]
           ) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in _LINE_RE.finditer(text):
        ls, le = m.start(), m.end()
        cuts = [] if _is_table_line(m.group()) else sentence_ends(text, ls, le)
        a = ls
        for b in [*cuts, le]:
            s, e = _strip_span(text, a, b)
            if s < e and _HAS_WORD.search(text, s, e):
                spans.append((s, e))
            a = b
    return spans
