"""Embedder backends behind one small interface (:class:`Embedder`), found by name."""

from typing import Any

from .base import (
    IDENTITY,
    Embedder,
    embedder_difference,
    embedder_from_meta,
    get_embedder,
    known_embedders,
    register_embedder,
)
from .e5_small import E5SmallEmbedder
from .hashing import HashingEmbedder
from .use_multilingual import UseMultilingualEmbedder


def _openai_embedder(**params: Any) -> Embedder:
    # Imported on first use: httpx costs ~0.1 s at start-up for every command otherwise.
    from .openai_compat import OpenAICompatEmbedder

    return OpenAICompatEmbedder(**params)


# The one place the built-in backends are registered (by name; see get_embedder).
register_embedder("hashing", HashingEmbedder)
register_embedder("e5-small", E5SmallEmbedder)
register_embedder("use-multilingual", UseMultilingualEmbedder)
register_embedder("openai", _openai_embedder)

__all__ = [
    "IDENTITY",
    "E5SmallEmbedder",
    "Embedder",
    "HashingEmbedder",
    "UseMultilingualEmbedder",
    "embedder_difference",
    "embedder_from_meta",
    "get_embedder",
    "known_embedders",
    "register_embedder",
]
