"""Text helpers shared by the answerer, the metrics and the failure diagnosis.

Korean, German and English are treated with small, explicit rules rather than language
models, so that every comparison is deterministic and explainable:

- :func:`fold_text` folds width (NFKC), case and whitespace; every comparison goes through it.
- :func:`tokens` / :func:`content_words` give the words a question is "about". Korean particle
  (josa) and verb-ending stripping is a *heuristic* (a longest-suffix-first list), not a
  morphological analyser: it can over-strip (``전문가`` → ``전문``) or miss forms. Callers
  compare content words as substrings, where an over-stripped stem still matches.
- The sentence splitter is :func:`ragassay.sentences.split_sentences` (character spans, so
  callers can cite or quote exact text).
- :func:`contains_term` is the one containment test used for must-contain items, expected
  terms and decline phrases.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import repeat
from typing import Literal

Language = Literal["ko", "de", "en"]

# --- normalisation --------------------------------------------------------------------

_WS = re.compile(r"\s+")
# Typographic quotes fold to ASCII so that "don’t" and "don't" compare equal.
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})


def fold_text(text: str) -> str:
    """NFKC (full-width ``ＡＢＣ１`` → ``ABC1``), typographic quotes → ASCII, casefold
    (``ß`` → ``ss``), whitespace runs → one space, stripped at both ends."""
    # Fast path (what :func:`fold_text_reference` does, step for step): ASCII is its own
    # NFKC form, holds no typographic quote and casefolds as lower(); str.split() cuts at
    # the same whitespace as ``\s+`` and drops it at both ends.
    if text.isascii():
        return " ".join(text.lower().split())
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold().split())


def fold_text_reference(text: str) -> str:
    """The plain :func:`fold_text` (its differential test compares the two)."""
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return _WS.sub(" ", folded).strip()


# --- language guess -------------------------------------------------------------------

_HANGUL = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f"
_HANGUL_RE = re.compile(f"[{_HANGUL}]")
_LATIN_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")
_WORD_RE = re.compile(r"[^\W\d_]+")
_UMLAUT_RE = re.compile(r"[äöüÄÖÜß]")
# Frequent German words that are not (frequent) English words.
_DE_MARKERS = frozenset(
    "und der das ist nicht mit für wie was welche welcher welches welchen wann wer wo warum "
    "gibt es ein eine einen einem einer werden wird sind beträgt innerhalb bis auf bei nach "
    "oder zu dem den des ich sie wir kann können muss müssen gilt lange viele wieviel "
    "wie viele kostet dauert im vom zum zur über".split()
)
_EN_MARKERS = frozenset(
    "the is are what which how of and to does do with for when who where why can "
    "this that be by on from".split()
)

# +1 for a German marker, -1 for an English one (the two lists share no word).
_MARKER_SIGN = {**{w: 1 for w in _DE_MARKERS}, **{w: -1 for w in _EN_MARKERS}}
# ASCII letters lowercased, any other ASCII character a space.
_ASCII_LETTERS = str.maketrans({i: chr(i).lower() if chr(i).isalpha() else " "
                                for i in range(128)})


@lru_cache(maxsize=16384)  # the number reader asks once per text, the scorer again
def guess_language(text: str) -> Language:
    """A coarse guess: ``ko`` when Hangul is at least a quarter as frequent as Latin letters;
    ``de`` when the text has umlauts/ß or more German than English marker words; else ``en``.

    Meant for picking a decline message or a number convention, not for routing documents.
    """
    # What guess_language_reference computes, with less work (the number reader asks for
    # every text it reads: 20,000 texts, 1.5 s of a 6,000-question run). Only the sign of
    # (German markers - English markers) matters: one look-up a word. ASCII text has no
    # Hangul and no umlaut, and its words are its runs of ASCII letters, lowercased.
    if text.isascii():
        words = text.translate(_ASCII_LETTERS).split()
        return "de" if sum(map(_MARKER_SIGN.get, words, repeat(0))) > 0 else "en"
    if _HANGUL_RE.search(text) is not None:
        if len(_HANGUL_RE.findall(text)) * 4 >= len(_LATIN_RE.findall(text)):
            return "ko"
    # casefold maps character by character, and a word holds no space
    words = " ".join(_WORD_RE.findall(text)).casefold().split(" ")
    lead = sum(map(_MARKER_SIGN.get, words, repeat(0)))
    if lead:
        return "de" if lead > 0 else "en"
    return "de" if _UMLAUT_RE.search(text) else "en"


def guess_language_reference(text: str) -> Language:
    """The plain :func:`guess_language` (its differential test compares the two)."""
    hangul = len(_HANGUL_RE.findall(text))
    latin = len(_LATIN_RE.findall(text))
    if hangul and hangul * 4 >= latin:
        return "ko"
    words = [w.casefold() for w in _WORD_RE.findall(text)]
    de = sum(w in _DE_MARKERS for w in words)
    en = sum(w in _EN_MARKERS for w in words)
    if _UMLAUT_RE.search(text) and de >= en:
        return "de"
    return "de" if de > en else "en"


# --- tokens and content words ---------------------------------------------------------

# Numbers with decimal/thousands separators stay one token (``99.5``, ``3,000만원``).
_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)+\w*|\w+")


_WORD_CHARS = re.compile(r"\w+")
_DOTTED_NUMBER = re.compile(r"\d[.,]\d")
# ASCII word characters (letters, digits, "_") as they are, any other ASCII character a space.
_ASCII_WORD_CHARS = str.maketrans({i: chr(i) if chr(i).isalnum() or chr(i) == "_" else " "
                                   for i in range(128)})


def tokens(text: str) -> list[str]:
    """Word tokens (Unicode ``\\w+``) of ``fold_text(text)``; numbers such as ``99.5``,
    ``3,000`` or ``1.2.3`` stay whole, with any letters attached to them (``6개월``)."""
    # fold_text but its whitespace folding, which changes no token (whitespace only ever
    # separates tokens); ASCII is its own NFKC form and casefolds as lower().
    if text.isascii():
        folded = text.lower()
    else:
        folded = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    # Without a digit, "." or "," and a digit in a row, _TOKEN_RE's number branch cannot
    # match and its tokens are the runs of word characters: in ASCII text, the runs that
    # str.split() finds once every other character is a space (faster than the pattern).
    if ("." in folded or "," in folded) and _DOTTED_NUMBER.search(folded) is not None:
        return _TOKEN_RE.findall(folded)
    if folded.isascii():
        return folded.translate(_ASCII_WORD_CHARS).split()
    return _WORD_CHARS.findall(folded)


def tokens_reference(text: str) -> list[str]:
    """The plain :func:`tokens` (its differential test compares the two)."""
    return _TOKEN_RE.findall(fold_text_reference(text))


def _norm_set(words: str) -> frozenset[str]:
    return frozenset(fold_text(w) for w in words.split())


STOPWORDS: dict[Language, frozenset[str]] = {
    "ko": _norm_set(
        "무엇 무슨 어떤 어떻게 언제 어디 어디서 어디에 누구 누가 왜 몇 얼마 얼마나 "
        "있나요 있습니까 있는 있다 있는지 있습니다 없나요 없는 합니까 하나요 하는지 "
        "인가요 입니까 입니다 이다 됩니까 되나요 되는지 해당 알려 알려주세요 주세요 "
        "해야 하는 하여야 한다 되는 된다 하기 하고 하며 있어야 되어야 할 될 합니다 됩니다 하다 "
        "그 이 저 것 수 등 및 또는 그리고 대한 대해 대하여 관한 관련 위한 위해 통해 경우 "
        "의 을 를 은 는 이 가 에 도 와 과 로 만 "
        # one-syllable counters: too short to match anything meaningfully as a substring
        "년 월 일 개 명 번 시 분 초 주 회 건"
    ),
    "de": _norm_set(
        "was wer wie wo wann warum weshalb welche welcher welches welchen welchem wieviel "
        "wieviele viele viel lange der die das den dem des ein eine einen einem einer eines "
        "und oder ist sind war waren wird werden wurde hat haben gibt es ich sie wir ihr man "
        "mit für von zu zum zur im in am an auf bei nach aus um über unter nicht auch noch "
        "kann können muss müssen soll sollen darf dürfen mein meine ihre ihr bitte"
    ),
    "en": _norm_set(
        "what which who whom whose when where why how many much long is are was were be been "
        "being do does did the a an of to in on at for by with from and or as it its this "
        "that these those there their they i you we my our your can could should would will "
        "shall must may might has have had not any if about into than then so please tell me"
    ),
}
_ALL_STOPWORDS = frozenset().union(*STOPWORDS.values())

# Korean particles and common endings, longest first (so ``에서`` wins over ``서``-less ``에``).
KO_SUFFIXES: tuple[str, ...] = tuple(sorted(set(
    """은 는 이 가 을 를 의 에 에서 에게 으로 로 와 과 도 만 까지 부터 이며 이고 이다
    입니다 합니다 하여야 해야 한다 하는 된다 되는 인가요 인가 나요 까요 는지 은지
    에서는 에서도 에는 에도 으로는 로는 과의 와의 에게는 까지는 부터는 이나 이란 이라
    이라는 이라고 인지 입니까 합니까 됩니까 됩니다 하나요 하는지 되나요 되는지 하고 하며
    하면 하여 하지 했다 했습니다 되었다 되어야 되며 될 할 하기 으로서 로서 으로써 로써
    처럼 보다 마다 이면 이라면 께서 한테 한가요 한지 할까요 일까요 인데 하다 이어야 여야""".split()
), key=lambda s: (-len(s), s)))
_MIN_STEM = 2


def _is_hangul(ch: str) -> bool:
    return bool(_HANGUL_RE.match(ch))


def strip_korean_suffix(token: str, *, min_stem: int = _MIN_STEM) -> str:
    """Drop one Korean particle or verb ending (longest first) from a token that ends in
    Hangul, keeping at least ``min_stem`` characters: ``보증기간은`` → ``보증기간``,
    ``운영합니다`` → ``운영``, ``나이`` stays (``나`` would be too short).

    ``만`` after a number (``3천만``) is a multiplier, not the particle "only", and is kept.
    """
    if not token or not _is_hangul(token[-1]):
        return token
    for suffix in KO_SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= min_stem:
            stem = token[: -len(suffix)]
            if suffix == "만" and (stem[-1].isdigit() or stem[-1] in "천백십억"):
                continue
            return stem
    return token


def content_words(text: str, *, lang: Language | None = None) -> list[str]:
    """Tokens of ``text`` without stopwords, Korean tokens stripped of particles/endings.

    ``lang`` picks one stopword list; ``None`` uses the union of the ko/de/en lists (the
    safe choice for mixed Korean–English RFPs). Order and duplicates are kept.
    """
    return list(_content_words(text, lang))


# Cached: a chunk's sentences and an answer's claims are read by several checks, and a
# chunk by every question that retrieves it (45,000 calls in a 6,000-question run).
@lru_cache(maxsize=1 << 15)
def _content_words(text: str, lang: Language | None) -> tuple[str, ...]:
    # content_stem gives None for a stopword and never "": filter(None) keeps the others
    toks = tokens(text)
    stems = _STEMS[lang]
    try:
        return tuple(filter(None, map(stems.__getitem__, toks)))
    except KeyError:  # a token not seen yet
        if len(stems) >= _STEMS_MAX:  # start over
            stems.clear()
        found = [content_stem(tok, lang) for tok in toks]
        stems.update(zip(toks, found, strict=True))
        return tuple(filter(None, found))


# content_stem of each token seen, by language: a dict look-up is several times cheaper
# than content_stem's own cache (whose key is built of two arguments). Bounded.
_STEMS: dict[Language | None, dict[str, str | None]] = {
    lang: {} for lang in (None, "ko", "de", "en")}
_STEMS_MAX = 1 << 18


def content_words_reference(text: str, *, lang: Language | None = None) -> list[str]:
    """The plain :func:`content_words` (its differential test compares the two)."""
    out: list[str] = []
    for tok in tokens_reference(text):
        stem = content_stem(tok, lang)
        if stem is not None:
            out.append(stem)
    return out


@lru_cache(maxsize=1 << 18)
def content_stem(tok: str, lang: Language | None = None) -> str | None:
    """The content word of one token of :func:`tokens` (Korean particle or ending
    stripped), or ``None`` for a stopword of ``lang`` (``None``: any of the lists).
    Cached: running text repeats its words, and a token's stem never changes."""
    stop = STOPWORDS[lang] if lang is not None else _ALL_STOPWORDS
    if tok in stop:
        return None
    stem = strip_korean_suffix(tok)
    # "년인가요" keeps its ending (the stem would be one syllable), yet it is a stopword
    if stem in stop or strip_korean_suffix(tok, min_stem=1) in stop:
        return None
    return stem


# --- containment ----------------------------------------------------------------------

_MIXED_GAP = re.compile(
    rf"(?<=[{_HANGUL}])\s+(?=[0-9a-z\u00e0-\u024f])|(?<=[0-9a-z\u00e0-\u024f])\s+(?=[{_HANGUL}])"
)


def contains_term(haystack: str, term: str) -> bool:
    """Whether ``term`` occurs in ``haystack``, case- and width-insensitively (both go
    through :func:`fold_text`), ignoring spaces between a Hangul run and a Latin/digit run
    (``API연계`` matches ``API 연계``).

    A term that starts or ends with a digit must not continue a longer number in the
    haystack: ``6개월`` is not in ``16개월``, ``99.5`` is not in ``99.55``. A blank term
    never matches, so a blank label cannot pass an answer silently.
    """
    needle = squash(term)
    if needle and not needle[0].isdigit() and not needle[-1].isdigit():
        # term_pattern's pattern is then the needle alone: a substring test, without
        # compiling a pattern per distinct term (a run has thousands of labels)
        return needle in squash(haystack)
    pattern = term_pattern(term)
    return pattern is not None and pattern.search(squash(haystack)) is not None


# Cached: scoring tests one answer text against every decline phrase, expected term and
# must-contain item, and every phrase again for each answer.
@lru_cache(maxsize=1024)
def squash(text: str) -> str:
    """``text`` as :func:`contains_term` searches it: normalised, without the spaces between
    a Hangul run and a Latin/digit run."""
    folded = fold_text(text)
    if _HANGUL_RE.search(folded) is None:  # no gap to close (the pattern needs Hangul)
        return folded
    return _MIXED_GAP.sub("", folded)


def squash_reference(text: str) -> str:
    """The plain :func:`squash` (its differential test compares the two)."""
    return _MIXED_GAP.sub("", fold_text_reference(text))


@lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str] | None:
    """The pattern :func:`contains_term` looks for in a :func:`squash`-ed haystack
    (``None`` for a blank term, which never matches); its literal text is
    ``squash(term)``."""
    needle = squash(term)
    if not needle:
        return None
    pattern = re.escape(needle)
    if needle[0].isdigit():
        pattern = r"(?<!\d)(?<!\d[.,])" + pattern
    if needle[-1].isdigit():
        pattern += r"(?!\d)(?![.,]\d)"
    return re.compile(pattern)
