"""Deterministic pre-selection: the support sentence and the answer span of an item, picked
by the engine before the model is asked anything, so the model only writes the question.

A chunk's *sentences* are those of :func:`ragassay.sentences.split_sentences` that are between
:data:`MIN_SENTENCE_CHARS` and :data:`MAX_SENTENCE_CHARS` long, hold at least four words and
whose gold label (the sentence as ``support_claim``, the answer as ``required_terms``) is
``ok`` when anchored in the corpus — exactly the label :func:`~.checks.check_candidate`
builds, so a pick fails none of the checks on the sentence and the answer.

The answer spans of a sentence, best tier first:

- ``numeric``: the numbers :func:`~ragassay.metrics.numbers.extract_numbers` reads, as
  written (``24개월``, ``4,90 Euro``, ``February 7, 2016``): with a unit (dates and clock
  times included) first, then bare numbers;
- ``factoid``: a named term — two or more capitalised words (``Levi's Stadium``), a word
  with two capitals (``PayPal``, ``NFL``), a quoted term, or in Korean text a Latin-script
  term — then dates and years, then numbers with a unit, then (English and German) a single
  capitalised word that does not start the sentence.

Every span must be in its sentence (:func:`~ragassay.text.contains_term`) and pass the
number check (:func:`~.checks.number_problem`). Within the best tier the pick is seeded
(``seed``, kind, chunk id), so the same seed and chunks give the same picks.

The *frame* of a pick names what kind of value the answer is (a unit family of the number
reader, ``year``, ``count`` or ``term``); the prompts turn it into the question word
(``How long`` for ``month``, ``몇 개월`` in Korean).

Unanswerable items get a pick too: a sentence of the chunk (its topic) and an *absent
attribute* (:data:`~.wording.ABSENT`, e.g. ``fax number``) that no chunk of the corpus
mentions; the question asks for that attribute of the chunk's subject.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..anchor import anchor_label
from ..metrics.numbers import extract_numbers
from ..schema import Chunk, GoldEvidence
from ..sentences import split_sentences
from ..store import Index
from ..text import STOPWORDS, contains_term, fold_text, guess_language
from .checks import number_problem
from .sampling import seeds
from .wording import ABSENT

MIN_SENTENCE_CHARS = 25
MAX_SENTENCE_CHARS = 300  # a longer "sentence" is a table row or a list run together


@dataclass(frozen=True)
class Pick:
    """One support sentence of a chunk, the answer span in it (for an unanswerable item: the
    absent attribute) and the answer's frame."""

    chunk_id: str
    sentence: str
    answer: str
    frame: str


_CAPS = r"[A-ZÄÖÜÀ-Þ][\w'’.&-]*"
_NAME = re.compile(rf"{_CAPS}(?:\s+(?:of|the|de|du|von|der|für|and|&)?\s*{_CAPS})+")
_CAMEL = re.compile(r"\b[\w'’.-]*[A-Z][\w'’.-]*[A-Z][\w'’.-]*")
_QUOTED = re.compile(r"[\"“„«‘'「『《〈]([^\"”“«»‘’'」』》〉]{2,40})[\"”“»’'」』》〉]")
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9&.+-]*(?:\s+[A-Za-z][A-Za-z0-9&.+-]*)*")
_SINGLE_CAP = re.compile(rf"(?<=\s){_CAPS}")
_TRAIL = " .,;:!?'’\"()[]"


def _clean_span(span: str) -> str:
    """A term without surrounding punctuation, a possessive ``'s`` and leading stop words
    (``Die Zahlung`` → ``Zahlung``, ``Für Akkus`` → ``Akkus``)."""
    span = span.strip(_TRAIL).removesuffix("'s").removesuffix("’s")
    words = span.split()
    while words and fold_text(words[0]) in _ALL_STOP:
        words.pop(0)
    return " ".join(words)


_ALL_STOP = frozenset().union(*STOPWORDS.values())


def _frame(q_unit: str | None, raw: str, value: object) -> str:
    if q_unit is not None:
        return q_unit
    digits = raw.strip()
    if digits.isdigit() and len(digits) == 4 and 1000 <= int(digits) <= 2100:
        return "year_number"
    return "count"


def _numbers(sentence: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(numbers with a unit, bare numbers) of a sentence as (span, frame)."""
    with_unit: list[tuple[str, str]] = []
    bare: list[tuple[str, str]] = []
    for q in extract_numbers(sentence):
        span = q.raw.strip()
        if not span or number_problem(span, numeric=True) is not None:
            continue
        (with_unit if q.unit is not None else bare).append((span, _frame(q.unit, span,
                                                                         q.value)))
    return with_unit, bare


def answer_tiers(kind: str, sentence: str) -> list[list[tuple[str, str]]]:
    """The answer spans of ``sentence`` for ``kind``, as tiers of (span, frame), best tier
    first (see the module docstring); spans failing the span checks are left out."""
    with_unit, bare = _numbers(sentence)
    if kind == "numeric":
        tiers = [with_unit, bare]
    else:
        lang = guess_language(sentence)
        named: list[str] = []
        if lang == "ko":
            named += [m.group() for m in _LATIN_RUN.finditer(sentence)]
        else:  # German capitalises every noun: a run of them is no name
            named += [m.group() for m in _NAME.finditer(sentence)] if lang == "en" else []
            named += [m.group() for m in _CAMEL.finditer(sentence)]
        named += [m.group(1) for m in _QUOTED.finditer(sentence)]
        dated = [(s, f) for s, f in with_unit + bare if f in ("date", "year_number")]
        united = [(s, f) for s, f in with_unit if f not in ("date", "year_number")]
        # a word of a number (its unit) or of a name is no answer of its own
        numbers = [q.span for q in extract_numbers(sentence)]
        numbers += [m.span() for m in _NAME.finditer(sentence)]
        single = [m.group() for m in _SINGLE_CAP.finditer(sentence) if lang != "ko"
                  and not any(a < m.end() and m.start() < b for a, b in numbers)]
        tiers = [[(s, "term") for s in named], dated, united, [(s, "term") for s in single]]
    out = []
    for tier in tiers:
        seen: dict[str, str] = {}
        for span, frame in tier:
            span = _clean_span(span) if frame == "term" else span
            if (2 <= len(span) <= 60 and span not in seen
                    and fold_text(span) not in _ALL_STOP and len(span) < len(sentence) // 2
                    and contains_term(sentence, span)
                    and number_problem(span, numeric=kind == "numeric") is None):
                seen[span] = frame
        out.append(list(seen.items()))
    return out


def chunk_sentences(chunk: Chunk) -> list[str]:
    """The sentences of a chunk that may carry an item (length and word bounds only)."""
    out = []
    for a, b in split_sentences(chunk.text):
        s = chunk.text[a:b].strip()
        if MIN_SENTENCE_CHARS <= len(s) <= MAX_SENTENCE_CHARS and len(s.split()) >= 4:
            out.append(s)
    if guess_language(chunk.text) == "ko":  # Korean has fewer, longer words
        out = [s for s in out if len(s.split()) >= 3]
    return out


def _label_ok(chunk: Chunk, sentence: str, answer: str, index: Index) -> bool:
    label = GoldEvidence(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id,
                         support_claim=sentence, required_terms=[answer])
    return anchor_label(label, index).status == "ok"


def pick(kind: str, chunk: Chunk, index: Index, seed: int, *,
         avoid: Chunk | None = None, used: set[tuple[str, str]] | None = None
         ) -> Pick | None:
    """The seeded pick of a sentence and an answer span of ``chunk`` for ``kind`` (``None``
    when the chunk has none); ``avoid``: a distractor chunk that must not hold the answer;
    ``used``: (sentence, answer) pairs already asked about, not picked again."""
    rng = random.Random(f"{seed}:{kind}:{chunk.chunk_id}")
    per_tier: list[list[Pick]] = []
    for s in chunk_sentences(chunk):
        for t, tier in enumerate(answer_tiers(kind, s)):
            while len(per_tier) <= t:
                per_tier.append([])
            for span, frame in tier:
                if avoid is not None and contains_term(avoid.text, span):
                    continue
                if used is not None and (s, span) in used:
                    continue
                per_tier[t].append(Pick(chunk.chunk_id, s, span, frame))
    for picks in per_tier:
        rng.shuffle(picks)
        for p in picks:  # the anchoring is the costly part: only until one is ok
            if _label_ok(chunk, p.sentence, p.answer, index):
                return p
    return None


def absent_pick(chunk: Chunk, index: Index, seed: int) -> Pick | None:
    """An unanswerable item's pick: a sentence of ``chunk`` and an attribute of
    :data:`~.wording.ABSENT` in the chunk's language that no chunk of the corpus holds."""
    sentences = chunk_sentences(chunk)
    if not sentences:
        return None
    rng = random.Random(f"{seed}:unanswerable:{chunk.chunk_id}")
    attributes = list(ABSENT[guess_language(chunk.text)])
    rng.shuffle(attributes)
    for attr in attributes:
        if not any(contains_term(c.text, attr.term) for c in index.chunks):
            return Pick(chunk.chunk_id, rng.choice(sentences), attr.term, "absent")
    return None


def picks_for(kind: str, chunks: list[Chunk], index: Index, seed: int,
              used: set[tuple[str, str]] | None = None) -> list[Pick] | None:
    """The picks of one seed of ``kind`` (:func:`~.sampling.seeds`): one per gold chunk
    (two for ``two_chunk``), ``None`` when a chunk has none left (``used``: see
    :func:`pick`)."""
    if kind == "unanswerable":
        p = absent_pick(chunks[0], index, seed)
        return None if p is None else [p]
    if kind == "distractor":
        p = pick(kind, chunks[0], index, seed, avoid=chunks[1], used=used)
        return None if p is None else [p]
    if kind == "two_chunk":
        both = [pick("factoid", c, index, seed, used=used) for c in chunks]
        return None if None in both else [p for p in both if p is not None]
    p = pick(kind, chunks[0], index, seed, used=used)
    return None if p is None else [p]


def candidates(kind: str, index: Index, seed: int,
               used: set[tuple[str, str]] | None = None
               ) -> Iterator[tuple[list[Chunk], list[Pick]]]:
    """The seeds of ``kind`` in sampling order with their picks; seeds without one are
    skipped (no call is made for a chunk that holds no usable sentence).

    ``used`` is shared by the kinds of one generation: a (sentence, answer) pair asked about
    once is not picked again (a numeric and a factoid item on it would be one question), and
    every pick is added to it."""
    used = set() if used is None else used
    for chunks in seeds(kind, index, seed):
        p = picks_for(kind, chunks, index, seed, used)
        if p is not None:
            used.update((x.sentence, x.answer) for x in p if x.frame != "absent")
            yield chunks, p
