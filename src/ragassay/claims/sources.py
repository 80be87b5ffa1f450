"""The sources as the claim checks read them: sentences, their words and numbers, once per text.

A source is cut into its sentences (:func:`ragassay.sentences.split_sentences`, whitespace
collapsed) and the pairs of adjacent sentences (a claim may join two sentences; a line break
inside a table cell or a PDF line may cut one in two). Of each sentence the checks need its
content words and its numbers; a chunk is checked for every claim of every answer that
retrieves it, so all of this is cached per text (sizes hold a run's few thousand chunks,
answers and gold texts, and their sentences).

The content words of a pair are the union of its two sentences' words: a sentence is
whitespace-collapsed and the pair joins two with one space, and no token of
:func:`ragassay.text.tokens` crosses a space (NFKC composes nothing with a space), so
``content_words(f"{x} {y}") == content_words(x) + content_words(y)``. The numbers of a pair
are read from the pair itself (a date may run across the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from ..metrics.numbers import Quantity, extract_numbers
from ..sentences import split_sentences
from ..text import content_words

__all__ = ["SourceView", "numbers_of", "sentences_of", "source_sentences", "source_view",
           "words_of"]


@lru_cache(maxsize=1 << 15)
def sentences_of(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One source's sentences (whitespace collapsed) and its adjacent pairs."""
    own = [" ".join(text[a:b].split()) for a, b in split_sentences(text)]
    own = [x for x in own if x]
    return tuple(own), tuple(f"{x} {y}" for x, y in zip(own, own[1:], strict=False))


def source_sentences(sources: Sequence[str]) -> list[str]:
    """Every sentence of every source, then every pair of adjacent sentences of one source
    (:func:`sentences_of` of each, in order)."""
    out: list[str] = []
    pairs: list[str] = []
    for text in sources:
        own, own_pairs = sentences_of(text)
        out += own
        pairs += own_pairs
    return out + pairs


@lru_cache(maxsize=1 << 16)
def words_of(sentence: str) -> frozenset[str]:
    """The content words of a source sentence, as a set."""
    return frozenset(content_words(sentence))


@lru_cache(maxsize=1 << 16)
def numbers_of(sentence: str) -> tuple[Quantity, ...]:
    """The numbers of a source sentence (the number reader's own cache is smaller)."""
    return tuple(extract_numbers(sentence))


class SourceView(NamedTuple):
    """A source as the fast checks read it: its sentences and pairs (as
    :func:`sentences_of`), their content words, and its sentences joined and case-folded
    (to look a named term up: a term holds no whitespace, so it is in the joined text
    exactly when it is in one sentence)."""

    own: tuple[str, ...]
    pairs: tuple[str, ...]
    own_words: tuple[frozenset[str], ...]
    pair_words: tuple[frozenset[str], ...]
    folded: str


@lru_cache(maxsize=1 << 15)
def source_view(text: str) -> SourceView:
    """The :class:`SourceView` of one source text (see the module docstring)."""
    own, pairs = sentences_of(text)
    own_words = tuple(words_of(s) for s in own)
    pair_words = tuple(a | b for a, b in zip(own_words, own_words[1:], strict=False))
    return SourceView(own, pairs, own_words, pair_words, "\n".join(own).casefold())
