"""The deterministic checks a generated item must pass to be kept, each a recorded drop reason.

An item is a proposed question with its answer and, per gold chunk, the sentence of the
chunk that holds the answer (:class:`Candidate`). The checks, in the order they run
(the first that fails is the item's drop reason, :data:`DROP_REASONS`):

- ``support_not_in_chunk``: the support sentence, normalised as gold anchoring normalises
  (:func:`ragassay.text.fold_text`: NFKC, casefold, one space), is not in the chunk's text;
- ``label_not_ok``: the label built from it is not in state ``ok`` when anchored against the
  corpus (:func:`ragassay.anchor.anchor_label`): e.g. ``also_in`` for a sentence in the overlap
  of two chunks — so every kept label is ``ok`` in ``ragassay gold audit``;
- ``answer_not_in_support``: the answer (``must_contain``) is not in its support sentence
  (:func:`ragassay.text.contains_term`);
- ``number_unreadable``: a digit of the answer is in no number the number reader finds
  (:func:`ragassay.metrics.numbers.extract_numbers`), or a ``numeric`` item's answer holds no
  number at all;
- ``wrong_language``: the question is not in the chunk's language (:func:`question_language`);
- ``answer_in_question``: the question holds the answer;
- ``answer_in_corpus`` (unanswerable items): some chunk of the corpus holds every term the
  question asks about, so the corpus may answer it;
- ``distractor_same_value`` (distractor items): the distractor chunk of another document
  holds the answer too, so it is no distractor;
- ``not_answerable_from_chunk``: a second call, given the question and the gold chunk(s)
  only, gives an answer that does not match (:func:`answers_match`);
- ``near_duplicate``: the question is a near-duplicate of a question kept before it
  (:func:`similarity` ≥ :data:`NEAR_DUPLICATE`).

Two more reasons are not checks but outcomes of the calls: ``unparsable_reply`` (the reply is
not the JSON object asked for, or lacks a field) and ``endpoint_error`` (the call failed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ..anchor import anchor_label
from ..metrics.numbers import extract_numbers
from ..schema import GoldEvidence
from ..store import Index
from ..text import STOPWORDS, Language, contains_term, fold_text, guess_language, squash

DROP_REASONS: dict[str, str] = {
    "endpoint_error": "the call to the model failed (after its retries)",
    "unparsable_reply": "the reply is not the JSON object asked for, or lacks a field",
    "support_not_in_chunk": "the support sentence is not verbatim in its chunk",
    "label_not_ok": "the gold label is not in audit state ok",
    "answer_not_in_support": "the answer is not verbatim in the support sentence",
    "number_unreadable": "a number of the answer does not parse with the number reader",
    "wrong_language": "the question is not in the document's language",
    "answer_in_question": "the question contains the answer",
    "answer_in_corpus": "a chunk of the corpus holds what the unanswerable question asks",
    "distractor_same_value": "the distractor chunk holds the same answer",
    "not_answerable_from_chunk": "a second call does not answer it the same from the chunk",
    "near_duplicate": "a near-duplicate of a kept question",
}
"""Every reason an item is dropped for, in the order the checks run."""

NEAR_DUPLICATE = 0.7
"""Two questions are near-duplicates when :func:`similarity` is at least this."""

NGRAM = 3


@dataclass
class Support:
    """One gold piece of an item: the chunk, the answer part it holds and its sentence."""

    chunk_id: str
    answer: str
    sentence: str


@dataclass
class Candidate:
    """A proposed item, before the checks. ``supports`` is empty for an unanswerable item,
    whose ``missing`` terms name what the corpus must not hold; ``distractor`` is the chunk
    of another document a distractor item must differ from."""

    item_id: str
    kind: str
    chunk_ids: list[str]
    question: str
    supports: list[Support] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    distractor: str | None = None
    labels: list[GoldEvidence] = field(default_factory=list)

    @property
    def answers(self) -> list[str]:
        return [s.answer for s in self.supports]


@dataclass(frozen=True)
class Drop:
    """Why an item was dropped: a key of :data:`DROP_REASONS` and the evidence."""

    reason: str
    detail: str


# --- language ---------------------------------------------------------------------------

_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[^\W\d_]+")
_UMLAUT = re.compile("[äöüß]")


def question_language(text: str) -> Language | None:
    """The language of a question, by script then stop words (``None``: cannot tell).

    - ``ko`` when at least half of its letters are Hangul;
    - else, with no Hangul letter: ``de`` or ``en`` by which stop-word list
      (:data:`ragassay.text.STOPWORDS`) holds more of its words, an umlaut or ß counting as
      one German word; a tie (``Software?``) → ``None``.
    - Hangul below half of the letters: ``None`` (a mixed question).
    """
    letters = _LETTER.findall(text)
    if not letters:
        return None
    hangul = len(_HANGUL.findall(text))
    if hangul * 2 >= len(letters):
        return "ko"
    if hangul:
        return None
    words = [fold_text(w) for w in _WORD.findall(text)]
    de = sum(w in STOPWORDS["de"] for w in words) + bool(_UMLAUT.search(fold_text(text)))
    en = sum(w in STOPWORDS["en"] for w in words)
    if de == en:
        return None
    return "de" if de > en else "en"


def document_language(text: str) -> Language:
    """The language of a chunk: :func:`ragassay.text.guess_language` (Hangul share, then
    German against English marker words)."""
    return guess_language(text)


# --- similarity -------------------------------------------------------------------------


@lru_cache(maxsize=16384)  # a chunk's n-grams are asked for once per distractor search
def ngrams(text: str, n: int = NGRAM) -> frozenset[str]:
    """The character ``n``-grams of ``fold_text(text)`` (the whole text when shorter)."""
    t = fold_text(text)
    return frozenset(t[i:i + n] for i in range(max(len(t) - n + 1, 1))) if t else frozenset()


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the character trigram sets of two normalised texts:
    |A ∩ B| / |A ∪ B|, 0.0 when both are empty. ``"Wie lange gilt die Garantie?"`` and
    ``"Wie lange gilt die Garantie genau?"`` score 0.79 (near-duplicates); two questions
    about different facts of one chunk typically score below 0.4."""
    x, y = ngrams(a), ngrams(b)
    return len(x & y) / len(x | y) if x or y else 0.0


# --- the checks -------------------------------------------------------------------------

_DIGIT_RUN = re.compile(r"\d+")


def number_problem(answer: str, *, numeric: bool) -> str | None:
    """Why the numbers of an answer do not read (``None`` when they do): a digit outside
    every number :func:`extract_numbers` finds, or, for a numeric item, no number at all.
    Identifiers such as ``SFR-003`` hold digits that are no number: they fail here."""
    found = extract_numbers(answer)
    covered = [q.span for q in found]
    for m in _DIGIT_RUN.finditer(answer):
        if not any(a <= m.start() and m.end() <= b for a, b in covered):
            return f"{m.group()!r} in {answer!r} is in no number the number reader finds"
    if numeric and not found:
        return f"the numeric answer {answer!r} holds no number"
    return None


def check_candidate(item: Candidate, index: Index) -> Drop | None:
    """The deterministic checks of one item before its second call, in the order of
    :data:`DROP_REASONS` (``None`` when it passes them all). Fills ``item.labels`` with the
    gold labels of an answerable item: the support sentence as ``support_claim``, the answer
    as ``required_terms``."""
    item.labels = []
    for s in item.supports:
        chunk = index.chunk(s.chunk_id)
        if not s.sentence.strip() or fold_text(s.sentence) not in fold_text(chunk.text):
            return Drop("support_not_in_chunk", f"{s.sentence!r} is not in {s.chunk_id}")
        label = GoldEvidence(chunk_id=s.chunk_id, doc_id=chunk.doc_id,
                             support_claim=s.sentence.strip(), required_terms=[s.answer])
        anchored = anchor_label(label, index)
        if anchored.status != "ok":
            return Drop("label_not_ok", f"{s.chunk_id}: {anchored.status} ({anchored.reason})")
        item.labels.append(label)
    for s in item.supports:
        if not s.answer.strip() or not contains_term(s.sentence, s.answer):
            return Drop("answer_not_in_support", f"{s.answer!r} is not in {s.sentence!r}")
        problem = number_problem(s.answer, numeric=item.kind == "numeric")
        if problem is not None:
            return Drop("number_unreadable", problem)
    want = document_language(index.chunk(item.chunk_ids[0]).text)
    got = question_language(item.question)
    if got != want:
        return Drop("wrong_language", f"the chunk is {want}, the question "
                    + (f"is {got}" if got else "is in no language we can tell"))
    for answer in item.answers:
        if contains_term(item.question, answer):
            return Drop("answer_in_question", f"the question holds {answer!r}")
    if item.kind == "unanswerable":
        return _unanswerable_problem(item, index)
    if item.distractor is not None:
        for answer in item.answers:
            if contains_term(index.chunk(item.distractor).text, answer):
                return Drop("distractor_same_value",
                            f"{item.distractor} holds {answer!r} too")
    return None


def _unanswerable_problem(item: Candidate, index: Index) -> Drop | None:
    """An unanswerable item asks about ``missing`` terms: each must be a content word or
    phrase of the question, and no chunk of the whole corpus may hold all of them."""
    terms = [t.strip() for t in item.missing if t.strip()]
    if not terms or any(squash(t) in _ALL_STOP or len(squash(t)) < 2 for t in terms):
        return Drop("unparsable_reply", f"no usable missing term in {item.missing!r}")
    if not all(contains_term(item.question, t) for t in terms):
        return Drop("unparsable_reply", f"the missing terms {terms!r} are not in the question")
    for c in index.chunks:
        if all(contains_term(c.text, t) for t in terms):
            return Drop("answer_in_corpus", f"{c.chunk_id} holds {', '.join(terms)}")
    return None


_ALL_STOP = frozenset().union(*STOPWORDS.values())


def answers_match(expected: Sequence[str], reply: str) -> bool:
    """Whether a second call's answer ``reply`` matches the item's answer parts:

    - every part is in the reply (:func:`contains_term`, after the normalisation anchoring
      uses), or
    - for a one-part answer, the reply is a piece of the answer holding at least half of its
      characters (``Denver Broncos`` for ``the Denver Broncos``) and every number of the
      answer (``24개월`` for ``24개월간``; not ``Monaten`` for ``24 Monaten``), or
    - for a one-part answer holding numbers, the reply holds the same numbers by the number
      reader: equal values in the same unit (``24 months`` for ``24 Monate``).

    A blank reply never matches."""
    if not reply.strip():
        return False
    if all(contains_term(reply, part) for part in expected):
        return True
    if len(expected) != 1:
        return False
    short, full = squash(reply), squash(expected[0])
    wanted = _values(expected[0])
    same_numbers = not wanted - _values(reply)
    if contains_term(expected[0], reply) and 2 * len(short) >= len(full) and same_numbers:
        return True
    return bool(wanted) and same_numbers


def _values(text: str) -> set[tuple[object, str | None]]:
    return {(q.value, q.unit) for q in extract_numbers(text)}


def near_duplicate(question: str, kept: Sequence[str]) -> Drop | None:
    """A :data:`near_duplicate <DROP_REASONS>` drop when ``question`` is at least
    :data:`NEAR_DUPLICATE` similar to one of ``kept`` (the first such one is named)."""
    for other in kept:
        score = similarity(question, other)
        if score >= NEAR_DUPLICATE:
            return Drop("near_duplicate", f"similarity {score:.2f} to {other!r}")
    return None
