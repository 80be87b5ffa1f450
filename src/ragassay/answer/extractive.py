"""The naive baseline's offline answerer: quote the context sentences that share the most
words with the question, or decline.

Deliberately naive (the baseline contract): no reranking, no verification, no retry, no
use of the retrieval scores. It only picks sentences, so any improvement elsewhere in the pipeline
shows up in the metrics rather than being hidden by a clever answerer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from ..schema import Answer, Chunk, Citation
from ..sentences import split_sentences
from ..text import Language, content_words, fold_text, guess_language
from .prompt import count_parts, count_tokens

DECLINE_TEXT: dict[Language, str] = {
    "ko": "제공된 문서에서 답을 찾을 수 없습니다.",
    "de": "Die bereitgestellten Dokumente beantworten diese Frage nicht.",
    "en": "The provided documents do not answer this question.",
}

# A bullet or list number opening a sentence ("- ", "1. ", "2) "): dropped from the quote
# so that the answer does not carry list numbers its source uses only as markers.
_LEADING_MARKER = re.compile(r"^(?:[-*•·▪○●□■※]\s*|\(?\d{1,2}[.)]\s+)+")


class Answerer(Protocol):
    """Anything that answers a question from retrieved chunks, citing them.

    ``context`` is the retrieved chunks in rank order; ``scores`` their retrieval scores
    (same order; None when the retriever has none). Must be deterministic for the same
    inputs unless the implementation says otherwise.
    """

    def answer(self, question: str, context: Sequence[Chunk],
               scores: Sequence[float] | None = None) -> Answer: ...


@dataclass(frozen=True)
class _Candidate:
    support: float
    rank: int
    position: int
    chunk: Chunk
    sentence: str
    norm: str  # the sentence normalised

    @property
    def key(self) -> tuple[float, int, int]:
        # best support first; ties go to the higher-ranked chunk, then the earlier sentence
        return (-self.support, self.rank, self.position)


def sentence_support(question_words: Sequence[str], sentence: str) -> float:
    """Share of the question's content words that occur in the sentence (as substrings of
    the normalised sentence, so a Korean stem matches inside a compound or before a
    particle). 0.0 when the question has no content words."""
    return _support(question_words, fold_text(sentence))


def _support(question_words: Sequence[str], hay: str) -> float:
    """:func:`sentence_support` of a sentence normalised already."""
    if not question_words:
        return 0.0
    return sum(w in hay for w in question_words) / len(question_words)


class ExtractiveAnswerer:
    """Answer with up to ``max_sentences`` context sentences whose support (see
    :func:`sentence_support`) is at least ``min_support``, best first, each followed by
    `` [chunk_id]``; decline (status ``insufficient``) when no sentence qualifies.

    Sentences with the same normalised text (overlapping chunks repeat them) are quoted
    once. ``decline_text`` overrides the decline message per language (``ko``/``de``/``en``,
    picked by :func:`ragassay.text.guess_language` on the question).
    """

    def __init__(self, max_sentences: int = 2, min_support: float = 0.5,
                 decline_text: Mapping[str, str] | None = None) -> None:
        if max_sentences < 1:
            raise ValueError("max_sentences must be at least 1")
        if not 0.0 <= min_support <= 1.0:
            raise ValueError("min_support must be between 0 and 1")
        self.max_sentences = max_sentences
        self.min_support = min_support
        self.decline_text: dict[str, str] = {lang: text for lang, text in DECLINE_TEXT.items()}
        self.decline_text.update(decline_text or {})

    def answer(self, question: str, context: Sequence[Chunk],
               scores: Sequence[float] | None = None) -> Answer:
        """Pick sentences from ``context`` (``scores`` is accepted and ignored: naive)."""
        return self.answer_counted(question, context)[0]

    def answer_counted(self, question: str, context: Sequence[Chunk]) -> tuple[Answer, int]:
        """:meth:`answer` and the number of cl100k_base tokens of its text (what
        :func:`~ragassay.answer.prompt.count_tokens` gives for it), counted from its parts:
        each quoted sentence and each marker, which other answers hold too."""
        chosen = self._choose(content_words(question), context)
        if not chosen:
            text = self.decline_text[guess_language(question)]
            return (Answer(text=text, status="insufficient", citations=[]),
                    count_tokens(text))
        parts = []  # "s1", " [id1]", " s2", " [id2]": joined, the answer's text
        for i, c in enumerate(chosen):
            parts += [f" {c.sentence}" if i else c.sentence, f" [{c.chunk.chunk_id}]"]
        text = "".join(parts)
        citations: list[Citation] = []
        for c in chosen:
            if all(cit.chunk_id != c.chunk.chunk_id for cit in citations):
                page = c.chunk.page_span[0] if c.chunk.page_span else None
                citations.append(Citation(chunk_id=c.chunk.chunk_id, page=page))
        # a quoted sentence is stripped: a non-space meets a space at each cut
        return (Answer(text=text, status="supported", citations=citations),
                count_parts(parts))

    def _choose(self, words: Sequence[str], context: Sequence[Chunk]) -> list[_Candidate]:
        # choose_reference's choice, without a record per sentence (140,000 sentences in a
        # 6,000-question run): a sentence is searched only for the words its chunk holds
        # (a chunk holding too few is skipped), and only the sentences with enough
        # support are kept and sorted.
        words = list(dict.fromkeys(words))
        if not words:
            return []
        n, least = len(words), self.min_support
        found: list[tuple[float, int, int, str, str]] = []
        for rank, chunk in enumerate(context):
            sentences, whole = _sentences(chunk.text)
            present = [w for w in words if w in whole]  # the only ones its sentences hold
            if len(present) / n < least:
                continue
            for pos, (sentence, norm) in enumerate(sentences):
                support = sum(map(norm.__contains__, present)) / n
                if support >= least:
                    found.append((-support, rank, pos, sentence, norm))
        found.sort()  # (-support, rank, position) is unique: best support first, ...
        chosen: list[_Candidate] = []
        seen: set[str] = set()
        for neg_support, rank, pos, sentence, norm in found:
            if len(chosen) == self.max_sentences:
                break
            if norm in seen:
                continue
            seen.add(norm)
            chosen.append(_Candidate(-neg_support, rank, pos, context[rank], sentence, norm))
        return chosen


def choose_reference(answerer: ExtractiveAnswerer, words: Sequence[str],
                     context: Sequence[Chunk]) -> list[_Candidate]:
    """The plain ``ExtractiveAnswerer._choose``: every sentence a candidate, all sorted
    (its differential test compares the two)."""
    words = list(dict.fromkeys(words))
    if not words:
        return []
    candidates = [
        _Candidate(_support(words, norm), rank, pos, chunk, sentence, norm)
        for rank, chunk in enumerate(context)
        for pos, (sentence, norm) in enumerate(_sentences(chunk.text)[0])
    ]
    chosen: list[_Candidate] = []
    seen: set[str] = set()
    for cand in sorted(candidates, key=lambda c: c.key):
        if cand.support < answerer.min_support or len(chosen) == answerer.max_sentences:
            break
        if cand.norm in seen:
            continue
        seen.add(cand.norm)
        chosen.append(cand)
    return chosen


@lru_cache(maxsize=16384)  # a chunk is in the context of many questions
def _sentences(text: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """The chunk's sentences to quote, each with its normalised text (read once a chunk,
    not once a question), and those texts joined by line breaks (a content word, which
    holds none, occurs in it when it occurs in one of them)."""
    out = []
    for a, b in split_sentences(text):
        sentence = _LEADING_MARKER.sub("", text[a:b]).strip()
        if sentence:
            out.append((sentence, fold_text(sentence)))
    return tuple(out), "\n".join(norm for _, norm in out)
