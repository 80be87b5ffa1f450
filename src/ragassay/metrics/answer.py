"""Per-question answer metrics: is the answer sourced, grounded, relevant and right?

:func:`score_answer` computes every field of :class:`AnswerScores` for one question; the
definitions are in docs/metrics.md and on each field below. ``None`` means "not measured for
this question" (no expected terms, no must-contain items, no gold, nothing cited) and is
reported as missing by the aggregation, never averaged as 0.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from ..answer.citations import BRACKETS, inline_ids
from ..schema import Answer, Question
from ..text import contains_term, squash
from .numbers import extract_numbers, number_supported

DEFAULT_DECLINE_PHRASES: tuple[str, ...] = (
    # ko
    "알 수 없습니다",
    "찾을 수 없습니다",
    "답을 찾을 수 없",
    "확인할 수 없습니다",
    "답변할 수 없습니다",
    "문서에 나와 있지 않습니다",
    # de
    "Ich weiß es nicht",
    "weiß ich nicht",
    "beantworten diese Frage nicht",
    "kann diese Frage nicht beantworten",
    "nicht in den bereitgestellten Dokumenten",
    "lässt sich aus den Dokumenten nicht beantworten",
    # en
    "I don't know",
    "I do not know",
    "not answered by the provided documents",
    "do not answer this question",
    "does not answer this question",
    "cannot be answered from the provided",
    "not in the provided documents",
    "not found in the provided documents",
)
"""Phrases that mark an answer as a decline (matched with :func:`ragassay.text.contains_term`).
Kept specific on purpose: "keine Informationen" or "no information" also occur in real
answers ("no information is shared with third parties")."""

DECLINE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.IGNORECASE) for p in (
    # en: "not provided in the given sources", "is not mentioned in the context", "the
    # documents do not contain / say / mention …", "no information about … in the sources"
    r"\bnot\s+(?:\w+\s+){0,2}(?:provided|mentioned|stated|given|found|specified|"
    r"contained|included|available|covered|answered)\s+(?:in|by|within)\s+(?:the\s+)?"
    r"(?:\w+\s+){0,2}(?:sources?|documents?|context|texts?|passages?|excerpts?|chunks?)\b",
    r"\b(?:sources?|documents?|context|texts?|passages?)\s+(?:do|does|did)\s*(?:not|n't)\s+"
    r"(?:contain|say|mention|state|provide|include|specify|answer)\b",
    r"\bno\s+information\s+(?:\w+\s+){0,4}(?:in|from)\s+the\s+(?:\w+\s+){0,2}"
    r"(?:sources?|documents?|context|texts?)\b",
    # de: "in den Quellen nicht genannt / angegeben / enthalten", "die Dokumente enthalten
    # keine Angabe"
    r"\b(?:in\s+den|aus\s+den)\s+(?:\w+\s+){0,2}(?:Quellen|Dokumenten|Unterlagen|Texten)"
    r"\s+(?:\w+\s+){0,3}nicht\s+(?:\w+\s+){0,2}(?:genannt|angegeben|enthalten|erwähnt|"
    r"beantworten|ersichtlich|zu\s+finden)",
    r"\b(?:Quellen|Dokumente|Unterlagen)\s+(?:enthalten|nennen|erwähnen)\s+(?:keine|nicht)\b",
    # ko: "제공된 문서/자료/출처에 … 없습니다 / 나와 있지 않습니다 / 언급되어 있지 않습니다"
    r"(?:문서|자료|출처|근거|본문|컨텍스트)(?:에는|에서는|에|에서)\s*(?:\S+\s*){0,3}?"
    r"(?:없습니다|없다|않습니다|않는다|않음|찾을\s*수\s*없)",
))
"""Ways of saying "the sources do not tell" in Korean, German and English, beside the
fixed :data:`DEFAULT_DECLINE_PHRASES` (a model words its declines in its own way; the
patterns are checked on replies of the real local model in the tests). They all name the
sources, so an answer saying "not included in the price" is not a decline."""

DECLINED_STATUSES = frozenset({"insufficient", "abstained"})



def cited_chunk_ids(answer: Answer, known_ids: Collection[str]) -> list[str]:
    """Chunk ids the answer cites: ``answer.citations`` (all of them, known or not) then
    inline ``[chunk_id]`` markers in the text that name a known chunk, de-duplicated in
    order. Inline brackets that name no known chunk (``[1]``, ``[sic]``) are not citations.
    """
    return _cited(answer, inline_ids(answer.text), known_ids)


def unknown_citations(answer: Answer, known_ids: Collection[str]) -> list[str]:
    """Cited ids that name no known chunk: entries of ``answer.citations`` and inline
    markers shaped like a chunk id (``<doc_id>::chunk-NNN``), de-duplicated in order."""
    return _unknown(answer, inline_ids(answer.text), known_ids)


# The two read the text's markers (`inline_ids`) that score_answer finds once for both.
def _cited(answer: Answer, markers: list[str], known_ids: Collection[str]) -> list[str]:
    ids = [c.chunk_id.strip() for c in answer.citations]
    ids += [i for i in markers if i in known_ids]
    return list(dict.fromkeys(i for i in ids if i))


def _unknown(answer: Answer, markers: list[str], known_ids: Collection[str]) -> list[str]:
    ids = [c.chunk_id.strip() for c in answer.citations]
    ids += [i for i in markers if "::" in i]
    return list(dict.fromkeys(i for i in ids if i and i not in known_ids))


def strip_markers(text: str) -> str:
    """The answer text without inline ``[...]`` markers.

    Each marker becomes a line break, so that a list number after it (``… [a] 2. Die …``)
    is again at the start of a line, where number extraction ignores list markers.
    """
    return BRACKETS.sub("\n", text)


def is_declined(answer: Answer,
                decline_phrases: Sequence[str] = DEFAULT_DECLINE_PHRASES) -> bool:
    """Status ``insufficient``/``abstained``, or a text (markers removed) holding a decline
    phrase or matching a :data:`DECLINE_PATTERNS` pattern."""
    return _declines(answer.status, strip_markers(answer.text), decline_phrases)


def _declines(status: str, plain: str, decline_phrases: Sequence[str]) -> bool:
    """:func:`_declines_reference`'s verdict, with each phrase squashed once per phrase set
    and the patterns searched as one (hand-written: the phrase-by-phrase version made 20
    `contains_term` calls and 6 searches per answer, 0.3 s on a 6,000-question run)."""
    if status in DECLINED_STATUSES:
        return True
    needles, edged = _phrase_needles(tuple(decline_phrases))
    hay = squash(plain)
    return (any(n in hay for n in needles) or any(contains_term(plain, p) for p in edged)
            or (_may_decline(plain) and _ANY_DECLINE.search(plain) is not None))


def _declines_reference(status: str, plain: str, decline_phrases: Sequence[str]) -> bool:
    """The plain version of :func:`_declines`, kept as the reference its tests compare with."""
    return (status in DECLINED_STATUSES or any(contains_term(plain, p) for p in decline_phrases)
            or any(p.search(plain) for p in DECLINE_PATTERNS))


# One search for any pattern: an alternation matches somewhere iff one of its parts does.
_ANY_DECLINE = re.compile("|".join(f"(?:{p.pattern})" for p in DECLINE_PATTERNS),
                          re.IGNORECASE)
# Every pattern names the sources, so its match holds one of these words (in any case); the
# Korean pattern needs Hangul. An ASCII text, whose case the flag folds as `lower` does,
# holding none of them is no decline: the patterns' slow search is skipped. (Other texts
# are searched: the flag also folds a few other letters, "ſ" as "s".)
_SOURCE_WORDS = ("source", "document", "context", "text", "passage", "excerpt", "chunk",
                 "quelle", "dokument", "unterlage")


def _may_decline(plain: str) -> bool:
    if not plain.isascii():
        return True
    low = plain.lower()
    return any(w in low for w in _SOURCE_WORDS)


@lru_cache(maxsize=64)
def _phrase_needles(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The phrases as :func:`contains_term` tests them: the squashed phrases it looks for
    as plain substrings (no digit at either end), and the phrases it matches with a pattern
    (left to it). A blank phrase never matches: dropped."""
    needles, edged = [], []
    for p in phrases:
        needle = squash(p)
        if not needle:
            continue
        if needle[0].isdigit() or needle[-1].isdigit():
            edged.append(p)
        else:
            needles.append(needle)
    return tuple(dict.fromkeys(needles)), tuple(edged)


def item_alternatives(item: str | Sequence[str]) -> list[str]:
    """The texts that satisfy one ``must_contain`` item: the item itself, or each of its
    alternatives when it is a list (``["Denver Broncos", "the Broncos"]``: any one)."""
    return [item] if isinstance(item, str) else list(item)


def holds_item(text: str, item: str | Sequence[str]) -> bool:
    """Does ``text`` hold the ``must_contain`` item (one of its alternatives)? Matched with
    :func:`ragassay.text.contains_term`; pass the text without its markers
    (:func:`strip_markers`), as :func:`score_answer` does."""
    return any(contains_term(text, alt) for alt in item_alternatives(item))


@dataclass
class AnswerScores:
    """Answer metrics of one question (see :func:`score_answer` for each definition)."""

    cited_ids: list[str] = field(default_factory=list)
    unknown_citations: list[str] = field(default_factory=list)
    declined: bool = False
    faithfulness: int = 0
    groundedness: int = 0
    groundedness_reason: str = ""
    answer_relevancy: float | None = None
    correct: int | None = None
    must_contain_found: list[str | list[str]] = field(default_factory=list)
    citation_accuracy: float | None = None
    hallucination_flag: int | None = None
    unanswerable_detection_flag: int | None = None
    unsupported_numbers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict, fields in declaration order: :meth:`to_dict_reference`'s,
        written out (hand-written: `asdict` deep-copies field by field, 0.3 s on a
        6,000-question run)."""
        return {
            "cited_ids": list(self.cited_ids),
            "unknown_citations": list(self.unknown_citations),
            "declined": self.declined,
            "faithfulness": self.faithfulness,
            "groundedness": self.groundedness,
            "groundedness_reason": self.groundedness_reason,
            "answer_relevancy": self.answer_relevancy,
            "correct": self.correct,
            "must_contain_found": [m if isinstance(m, str) else _copied(m)
                                   for m in self.must_contain_found],
            "citation_accuracy": self.citation_accuracy,
            "hallucination_flag": self.hallucination_flag,
            "unanswerable_detection_flag": self.unanswerable_detection_flag,
            "unsupported_numbers": list(self.unsupported_numbers),
        }

    def to_dict_reference(self) -> dict[str, Any]:
        """The plain version of :meth:`to_dict`, kept as the reference its tests compare with."""
        return asdict(self)


def _copied(value: Any) -> Any:
    """A copy of a list (or tuple) of alternatives, as `asdict` makes it."""
    return type(value)(_copied(v) for v in value) if isinstance(value, list | tuple) else value


def _unsupported_numbers(plain: str, cited: Sequence[str],
                         chunk_texts: Mapping[str, str]) -> list[str]:
    numbers = extract_numbers(plain)
    if not numbers:  # the cited chunks' numbers are read only when there is one to find
        return []
    sources = [q for cid in cited for q in extract_numbers(chunk_texts.get(cid, ""))]
    return [q.raw for q in numbers if not number_supported(q, sources)]


def _groundedness(declined: bool, cited: Sequence[str], context: Collection[str],
                  unsupported: Sequence[str]) -> tuple[int, str]:
    if declined:
        return 1, ""
    if not cited:
        return 0, "no source"
    outside = next((cid for cid in cited if cid not in context), None)
    if outside is not None:
        return 0, f"source not in context: {outside}"
    if unsupported:
        return 0, f"number {unsupported[0]} not in source"
    return 1, ""


def score_answer(
    question: Question,
    answer: Answer,
    *,
    context_ids: Sequence[str],
    gold_ids: Collection[str],
    chunk_texts: Mapping[str, str],
    decline_phrases: Sequence[str] = DEFAULT_DECLINE_PHRASES,
) -> AnswerScores:
    """Score one answer against its context, gold chunks and question labels.

    - ``cited_ids``: :func:`cited_chunk_ids` (``chunk_texts`` keys are the known ids).
    - ``declined``: status insufficient/abstained, or a decline phrase in the text.
    - ``faithfulness``: 1 when every cited chunk is in ``context_ids``; a declined answer
      citing nothing → 1; a non-declined answer citing nothing → 0 (it claims without a
      source, so nothing shows it used its context).
    - ``groundedness`` / ``groundedness_reason``, first failing check wins: declined → 1;
      no citation → 0 "no source"; a cited chunk outside the context → 0
      "source not in context: <id>"; a number in the answer (inline markers removed)
      that the cited chunks do not hold (:func:`~.numbers.number_supported`) → 0
      "number <raw> not in source"; else 1.
    - The text checks below (and ``declined``, and the numbers above) read the answer
      without its inline ``[...]`` markers (:func:`strip_markers`): a chunk id names no
      answer.
    - ``answer_relevancy`` = |expected_terms found in the answer| / |expected_terms|;
      None without expected terms.
    - ``correct``: answerable → 1 when the answer is not declined and holds every
      ``must_contain`` item (an item that is a list of alternatives: any one of them,
      :func:`holds_item`), None when there are none; unanswerable → 1 when declined.
    - ``must_contain_found``: the ``must_contain`` items the answer holds, as written.
    - ``citation_accuracy`` = |cited ∩ gold| / |cited|; None when nothing is cited or the
      question has no gold.
    - ``hallucination_flag``: 1 when an unanswerable question gets a non-declined answer,
      or a non-declined answer to an answerable question with gold cites ≥ 1 chunk and no
      gold chunk; else 0. None for an answerable question without gold (the gold could not
      be placed): it cannot be judged, and counting it as 0 would reward a broken gold file.
    - ``unanswerable_detection_flag``: unanswerable → 1 when declined else 0; answerable
      → None.
    - ``unsupported_numbers``: every number of a non-declined answer that the cited
      chunks do not hold (all of them, for diagnosis; [] for a declined answer).
    """
    known = chunk_texts.keys()
    markers = inline_ids(answer.text)
    cited = _cited(answer, markers, known)
    # Every check of the text reads it without its markers, stripped here once: a marker is
    # no part of what the answer says ("[paris-p001::chunk-001]" does not name Paris).
    plain = strip_markers(answer.text)
    declined = _declines(answer.status, plain, decline_phrases)
    context = set(context_ids)
    gold = set(gold_ids)

    unsupported = [] if declined else _unsupported_numbers(plain, cited, chunk_texts)
    grounded, reason = _groundedness(declined, cited, context, unsupported)
    if cited:
        faithful = int(all(cid in context for cid in cited))
    else:
        faithful = int(declined)

    terms = question.expected_terms
    relevancy = (sum(contains_term(plain, t) for t in terms) / len(terms)
                 if terms else None)
    found = [m for m in question.must_contain if holds_item(plain, m)]
    if question.answerable:
        must = question.must_contain
        correct = (int(not declined and len(found) == len(must)) if must else None)
        detection = None
        hallucinated = (None if not gold else
                        not declined and bool(cited) and not any(cid in gold for cid in cited))
    else:
        correct = int(declined)
        detection = int(declined)
        hallucinated = not declined
    accuracy = (sum(cid in gold for cid in cited) / len(cited)) if cited and gold else None

    return AnswerScores(
        cited_ids=cited,
        unknown_citations=_unknown(answer, markers, known),
        declined=declined,
        faithfulness=faithful,
        groundedness=grounded,
        groundedness_reason=reason,
        answer_relevancy=relevancy,
        correct=correct,
        must_contain_found=found,
        citation_accuracy=accuracy,
        hallucination_flag=None if hallucinated is None else int(hallucinated),
        unanswerable_detection_flag=detection,
        unsupported_numbers=unsupported,
    )
