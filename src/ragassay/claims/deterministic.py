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
from ..text import content_words
from .sources import numbers_of, sentences_of, source_view, words_of

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


def claim_words(text: str) -> set[str]:
    """The content words a claim is matched by: without the numbers (the number reader
    compares those), so ``3년간`` and ``4년간`` are not two different words here, and
    without negation markers (the polarity check compares those)."""
    return set(_claim_words(text))


# Cached: a claim is checked against the cited chunks, the context and the gold in turn;
# its words are read as a source sentence's (an extractive answer's claims are sentences).
@lru_cache(maxsize=1 << 14)
def _claim_words(text: str) -> frozenset[str]:
    return frozenset(filter(_matching_word, words_of(text)))


# Cached per word: a run's claims repeat their words.
@lru_cache(maxsize=1 << 16)
def _matching_word(word: str) -> bool:
    """Whether a content word of a claim is one it is matched by (see :func:`claim_words`)."""
    return (not any(ch.isdigit() for ch in word) and not _NEGATION.fullmatch(word)
            and not _NEGATION.match(word))


# Cached per text: claims and anchor sentences are checked again and again.
@lru_cache(maxsize=1 << 15)
def _terms(text: str, initial: bool) -> frozenset[str]:
    return frozenset(named_terms(text, initial=initial))


@lru_cache(maxsize=1 << 15)
def _negated(text: str) -> bool:
    return negated(text)


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
    scored = [(s, len(claim_words & words_of(s)) / len(claim_words))
              for s in sentences]  # a sentence before the pairs that hold it: sort is stable
    return sorted((x for x in scored if x[1] >= least), key=lambda x: -x[1])


def _anchor(claim_words: frozenset[str], sentences: Sequence[str]) -> tuple[str, float]:
    best, score = "", 0.0
    if not claim_words:
        return best, score
    for s in sentences:
        overlap = len(claim_words & words_of(s)) / len(claim_words)
        if overlap > score:
            best, score = s, overlap
    return best, score


def decide_reference(claim: str, sources: Sequence[str]) -> Decision | None:
    """The plain version of :func:`decide` (kept to test it against): every sentence of
    every source compared, every source number read."""
    own: list[str] = []
    pairs: list[str] = []
    for text in sources:  # source_sentences(sources), in two parts
        own_of, pairs_of = sentences_of(text)
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
        own_numbers = [q for s in own for q in numbers_of(s)]
        missing = [q for q in numbers if not number_supported(q, own_numbers)]
        if missing:
            pair_numbers = [q for s in pairs for q in numbers_of(s)]
            missing = [q for q in missing if not number_supported(q, pair_numbers)]
        if missing:
            for sentence, _ in _ranked(words, sentences, CLASH_OVERLAP):
                clash = [a for q in missing for a in numbers_of(sentence)
                         if _same_family(q, a)]
                if clash:
                    return Decision("contradicted", "numbers", sentence,
                                    f"{missing[0].raw!r} where the source says "
                                    f"{clash[0].raw!r}")
            return Decision("unsupported", "numbers", "",
                            f"no source holds {missing[0].raw!r}")
        holding = next(((x, o) for x, o in _ranked(words, sentences, TOPIC_OVERLAP)
                        if all(number_supported(q, numbers_of(x)) for q in numbers)), None)
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


@lru_cache(maxsize=1024)
def _least_shared(n: int, least: float) -> int:
    """The fewest of a claim's ``n`` content words a sentence must share to reach overlap
    ``least`` (compared as the overlap itself is: ``shared / n >= least``)."""
    return next((k for k in range(n + 1) if k / n >= least), n + 1)


def decide(claim: str, sources: Sequence[str]) -> Decision | None:
    """The deterministic verdict of ``claim`` against ``sources`` (texts), or ``None`` when
    the checks cannot decide. No sources → ``unsupported``.

    What :func:`decide_reference` decides, computed faster: each source read once
    (:func:`.sources.source_view`), each sentence's overlap counted once, numbers read
    only as far as the verdict needs them, and one verdict per distinct claim and sources."""
    return _decided(claim, tuple(sources))


# Cached: the same chunks are retrieved (cited) together for several questions.
@lru_cache(maxsize=1 << 13)
def _joined(sources: tuple[str, ...]) -> tuple[str, tuple[str, ...],
                                               tuple[frozenset[str], ...], int]:
    """The sources' case-folded sentences joined (as :attr:`.sources.SourceView.folded`,
    for all of them: a named term holds no line break), their sentences (as
    :func:`.sources.source_sentences`) with their content words, and how many are single
    sentences (the pairs follow)."""
    views = [source_view(text) for text in sources]
    sentences: list[str] = []
    wsets: list[frozenset[str]] = []
    for v in views:
        sentences += v.own
        wsets += v.own_words
    n_own = len(sentences)
    for v in views:
        sentences += v.pairs
        wsets += v.pair_words
    return "\n".join(v.folded for v in views), tuple(sentences), tuple(wsets), n_own


# Cached: one chunk sentence answers several questions that cite its chunk, so a claim
# meets the same sources again (a fifth of a SQuAD-shaped run's checks repeat one).
@lru_cache(maxsize=1 << 14)
def _decided(claim: str, sources: tuple[str, ...]) -> Decision | None:
    folded, sentences, wsets, n_own = _joined(sources)
    if not sentences:
        return Decision("unsupported", "overlap", "", "no source text")
    words = _claim_words(claim)
    n = len(words)
    shared = [len(words & w) for w in wsets] if n else []
    best = max(shared, default=0)
    anchor, overlap = (sentences[shared.index(best)], best / n) if best else ("", 0.0)
    on_topic = overlap >= TOPIC_OVERLAP

    def ranked(least: float) -> list[int]:  # as _ranked, by index
        if not n:
            return []
        at_least = _least_shared(n, least)
        return sorted((i for i, k in enumerate(shared) if k >= at_least),
                      key=lambda i: -shared[i])

    numbers = numbers_of(claim)  # an extractive answer's claims are source sentences
    if numbers:
        # a sentence that holds every claim number leaves none missing: the rest of the
        # sources is read only when no close sentence holds them all
        held = next((i for i in ranked(TOPIC_OVERLAP)
                     if all(number_supported(q, numbers_of(sentences[i])) for q in numbers)),
                    None)
        if held is not None:  # the closest sentence that holds every number of the claim
            anchor, overlap = sentences[held], shared[held] / n
        else:
            missing = list(numbers)
            # closest first, single sentences before pairs: the numbers are found sooner
            order = (sorted(range(n_own), key=shared.__getitem__, reverse=True)
                     + sorted(range(n_own, len(sentences)), key=shared.__getitem__,
                              reverse=True)) if n else range(len(sentences))
            for i in order:
                if not missing:
                    break
                found = numbers_of(sentences[i])
                if found:
                    missing = [q for q in missing if not number_supported(q, found)]
            if missing:
                for i in ranked(CLASH_OVERLAP):
                    clash = [a for q in missing for a in numbers_of(sentences[i])
                             if _same_family(q, a)]
                    if clash:
                        return Decision("contradicted", "numbers", sentences[i],
                                        f"{missing[0].raw!r} where the source says "
                                        f"{clash[0].raw!r}")
                return Decision("unsupported", "numbers", "",
                                f"no source holds {missing[0].raw!r}")
            on_topic = False  # the numbers are elsewhere: leave the pairing to the judge
    if not on_topic:
        return None
    if _negated(claim) != _negated(anchor) and overlap >= NEGATION_OVERLAP:
        which = "the claim" if _negated(claim) else "the source"
        return Decision("contradicted", "negation", anchor, f"only {which} is negated")
    terms = _terms(claim, True)
    absent = sorted(t for t in terms if t not in folded)
    if absent:
        claim_text = claim.casefold()
        others = sorted(t for t in _terms(anchor, True) - terms if t not in claim_text)
        if others:
            return Decision("contradicted", "terms", anchor,
                            f"{absent[0]!r} where the source names {others[0]!r}")
        strong = sorted(t for t in absent if t in _terms(claim, False))
        if strong:
            return Decision("unsupported", "terms", "", f"no source names {strong[0]!r}")
    if overlap >= 1.0:
        return Decision("entailed", "numbers" if numbers else "overlap", anchor,
                        "the source sentence holds every content word"
                        + (" and number" if numbers else ""))
    return None
