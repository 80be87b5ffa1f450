"""Deterministic claim checks: numbers with units and dates, named terms, negation.

Each check compares a claim with the *sentences* of a set of sources and either decides a
verdict (with the source sentence as the evidence span) or leaves the claim undecided for
the judge. They run in this order; the first that decides wins:

1. **topic**: the source sentence that shares most of the claim's content words
   (:func:`ragassay.text.content_words`, Korean particles stripped) is the claim's
   *anchor*; ``overlap`` = shared / claim content words. Without an anchor of overlap
   >= :data:`TOPIC_OVERLAP` nothing can be decided here, except by numbers.
2. **numbers** (the number reader :mod:`ragassay.metrics.numbers`, with units and dates):
   a claim number that no source sentence holds → ``contradicted`` when the anchor holds a
   number of the same unit family (or a date for a date), with that sentence as evidence,
   else ``unsupported``. All claim numbers held by the anchor → passes on to 3 and 4.
3. **negation markers** (``not``/``no``/``never``/``n't``/``without``; ``nicht``/``kein…``/
   ``nie``/``niemals``/``ohne``; ``않``/``안``/``못``/``없``/``아니``/``아닌``): the claim
   and its anchor disagree in polarity → ``contradicted``.
4. **named terms**: words written with a capital inside a sentence, Latin words in Korean
   text, and identifiers with digits (``SFR-003``). A claim term that no source holds →
   ``contradicted`` when the anchor holds a named term the claim lacks (a swapped entity),
   else ``unsupported``.
5. **entailed**: every claim content word is in the anchor (overlap 1.0), numbers held,
   polarity equal, named terms present → ``entailed``.

Anything else is undecided (``None``): paraphrase, inference and partial overlap go to the
judge. What is not seen: synonyms, unit conversion (see :mod:`ragassay.metrics.numbers`),
a negation expressed without a marker (``fails to``, ``absent``), an entity swapped for one
written in lower case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..metrics.numbers import DATE, TIME, Quantity, extract_numbers, number_supported
from ..text import content_words, split_sentences

ClaimVerdict = Literal["entailed", "contradicted", "unsupported"]
VERDICTS: tuple[ClaimVerdict, ...] = ("entailed", "contradicted", "unsupported")
TOPIC_OVERLAP = 0.5  # share of the claim's content words an anchor sentence must hold
CLASH_OVERLAP = 0.3  # a sentence this close holding another number of the kind contradicts
NEGATION_OVERLAP = 0.7  # polarity is compared only with a sentence this close

_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|without|cannot|nicht|kein\w*|nie|niemals|ohne"
    r"|nichts)\b|n't\b|(?:않|못|없|아니|아닌)|(?<![\uac00-\ud7a3])안\s", re.IGNORECASE)
_CAPITAL = re.compile(r"(?<=[^.!?:\s][\s(\"'])[A-ZÄÖÜ][\w&-]+")  # not a sentence's first
_INITIAL = re.compile(r"(?:^|[.!?:]\s+)([A-Z][\w&-]+)")
_LATIN_IN_KO = re.compile(r"[A-Za-z][\w&-]+")
_IDENT = re.compile(r"\b[A-Za-z]+[-_]?\d[\w-]*\b")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# sentence-internal capitals that are not names (German capitalises every noun)
_GERMAN_HINT = re.compile(r"\b(?:der|die|das|und|ist|nicht|mit|für|von|beträgt)\b", re.I)


@dataclass(frozen=True)
class Decision:
    """A verdict the deterministic checks reached: which check (``numbers``, ``negation``,
    ``terms``, ``overlap``), the evidence span (a source sentence, "" when none) and why."""

    verdict: ClaimVerdict
    check: str
    evidence: str
    reason: str


def named_terms(text: str, *, initial: bool = False) -> set[str]:
    """The named terms of ``text`` (see the module docstring), case-folded. With
    ``initial``, also a capitalised first word of a sentence that is no stopword (``Bosch
    supplies …``; weaker evidence: it may be any word)."""
    found = {m.group(0) for m in _IDENT.finditer(text)}
    if _HANGUL.search(text):
        found |= {m.group(0) for m in _LATIN_IN_KO.finditer(text)}
    elif not _GERMAN_HINT.search(text):  # in German every noun has a capital
        found |= {m.group(0) for m in _CAPITAL.finditer(text)}
        if initial:
            found |= {m.group(1) for m in _INITIAL.finditer(text)
                      if content_words(m.group(1))}
    return {t.casefold() for t in found}


def negated(text: str) -> bool:
    """Whether ``text`` holds a negation marker (see the module docstring)."""
    return _NEGATION.search(text) is not None


def source_sentences(sources: Sequence[str]) -> list[str]:
    """Every sentence of every source, whitespace collapsed, then every pair of adjacent
    sentences of one source (a claim may join two sentences; a line break inside a table
    cell or a PDF line may cut one in two)."""
    out: list[str] = []
    pairs: list[str] = []
    for text in sources:
        own, own_pairs = _sentences_of(text)
        out += own
        pairs += own_pairs
    return out + pairs


# Cached per text: a chunk is checked for every claim of every answer that retrieves it.
@lru_cache(maxsize=8192)
def _sentences_of(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One source's sentences (whitespace collapsed) and its adjacent pairs."""
    own = [" ".join(text[a:b].split()) for a, b in split_sentences(text)]
    own = [x for x in own if x]
    return tuple(own), tuple(f"{x} {y}" for x, y in zip(own, own[1:], strict=False))


# Cached per sentence: the same sentences are compared with every claim (sizes hold a
# few thousand chunks' sentences and pairs).
@lru_cache(maxsize=1 << 15)
def _words_of(sentence: str) -> frozenset[str]:
    """The content words of a source sentence, as a set."""
    return frozenset(content_words(sentence))


@lru_cache(maxsize=1 << 15)
def _numbers_of(sentence: str) -> tuple[Quantity, ...]:
    """The numbers of a source sentence (the number reader's own cache is smaller)."""
    return tuple(extract_numbers(sentence))


def claim_words(text: str) -> set[str]:
    """The content words a claim is matched by: without the numbers (the number reader
    compares those), so ``3년간`` and ``4년간`` are not two different words here, and
    without negation markers (the polarity check compares those)."""
    return set(_claim_words(text))


# Cached: a claim is checked against the cited chunks, the context and the gold in turn.
@lru_cache(maxsize=4096)
def _claim_words(text: str) -> frozenset[str]:
    return frozenset(w for w in content_words(text)
                     if not any(ch.isdigit() for ch in w) and not _NEGATION.fullmatch(w)
                     and not _NEGATION.match(w))


def _same_family(a: Quantity, b: Quantity) -> bool:
    """Two numbers that say the same kind of thing: dates with dates, clock times with
    clock times, equal unit families, or both without a unit (a year, a count)."""
    if DATE in (a.unit, b.unit) or TIME in (a.unit, b.unit):
        return a.unit == b.unit
    return a.unit == b.unit


def _ranked(claim_words: frozenset[str], sentences: Sequence[str], least: float
            ) -> list[tuple[str, float]]:
    """Sentences sharing at least ``least`` of the claim's content words, closest first."""
    if not claim_words:
        return []
    scored = [(s, len(claim_words & _words_of(s)) / len(claim_words))
              for s in sentences]  # a sentence before the pairs that hold it: sort is stable
    return sorted((x for x in scored if x[1] >= least), key=lambda x: -x[1])


def _anchor(claim_words: frozenset[str], sentences: Sequence[str]) -> tuple[str, float]:
    best, score = "", 0.0
    if not claim_words:
        return best, score
    for s in sentences:
        overlap = len(claim_words & _words_of(s)) / len(claim_words)
        if overlap > score:
            best, score = s, overlap
    return best, score


def decide(claim: str, sources: Sequence[str]) -> Decision | None:
    """The deterministic verdict of ``claim`` against ``sources`` (texts), or ``None`` when
    the checks cannot decide. No sources → ``unsupported``."""
    own: list[str] = []
    pairs: list[str] = []
    for text in sources:  # source_sentences(sources), in two parts
        own_of, pairs_of = _sentences_of(text)
        own += own_of
        pairs += pairs_of
    sentences = own + pairs
    if not sentences:
        return Decision("unsupported", "overlap", "", "no source text")
    words = _claim_words(claim)
    anchor, overlap = _anchor(words, sentences)
    on_topic = overlap >= TOPIC_OVERLAP
    numbers = extract_numbers(claim)
    if numbers:
        # a number is supported by any source number: the pairs' numbers are read only
        # for a number no single sentence holds (reading numbers is the costly part)
        own_numbers = [q for s in own for q in _numbers_of(s)]
        missing = [q for q in numbers if not number_supported(q, own_numbers)]
        if missing:
            pair_numbers = [q for s in pairs for q in _numbers_of(s)]
            missing = [q for q in missing if not number_supported(q, pair_numbers)]
        if missing:
            for sentence, _ in _ranked(words, sentences, CLASH_OVERLAP):
                clash = [a for q in missing for a in _numbers_of(sentence)
                         if _same_family(q, a)]
                if clash:
                    return Decision("contradicted", "numbers", sentence,
                                    f"{missing[0].raw!r} where the source says "
                                    f"{clash[0].raw!r}")
            return Decision("unsupported", "numbers", "",
                            f"no source holds {missing[0].raw!r}")
        holding = next(((x, o) for x, o in _ranked(words, sentences, TOPIC_OVERLAP)
                        if all(number_supported(q, _numbers_of(x)) for q in numbers)), None)
        if holding:  # the closest sentence that holds every number of the claim
            anchor, overlap = holding
        else:
            on_topic = False  # the numbers are elsewhere: leave the pairing to the judge
    if not on_topic:
        return None
    if negated(claim) != negated(anchor) and overlap >= NEGATION_OVERLAP:
        which = "the claim" if negated(claim) else "the source"
        return Decision("contradicted", "negation", anchor, f"only {which} is negated")
    terms = named_terms(claim, initial=True)
    source_text = " ".join(sentences).casefold()
    absent = sorted(t for t in terms if t not in source_text)
    if absent:
        claim_text = claim.casefold()
        others = sorted(t for t in named_terms(anchor, initial=True) - terms
                        if t not in claim_text)
        if others:
            return Decision("contradicted", "terms", anchor,
                            f"{absent[0]!r} where the source names {others[0]!r}")
        strong = sorted(t for t in absent if t in named_terms(claim))
        if strong:
            return Decision("unsupported", "terms", "", f"no source names {strong[0]!r}")
    if overlap >= 1.0:
        return Decision("entailed", "numbers" if numbers else "overlap", anchor,
                        "the source sentence holds every content word"
                        + (" and number" if numbers else ""))
    return None
