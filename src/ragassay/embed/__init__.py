"""Embedder backends behind one small interface (:class:`Embedder`), found by name."""

from .base import (
    Embedder,
    embedder_from_meta,
    get_embedder,
    known_embedders,
    register_embedder,
)
from .hashing import HashingEmbedder

register_embedder("hashing", HashingEmbedder)

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "embedder_from_meta",
    "get_embedder",
    "known_embedders",
    "register_embedder",
]
