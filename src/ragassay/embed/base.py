"""The one small interface every embedder backend implements, and the registry of backends."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import unknown_name


class Embedder(ABC):
    """Turns texts into float32 vectors of shape ``(n, dimension)``.

    ``name`` is the registry name, ``model`` names the exact model (it changes when any
    parameter that changes the vectors changes), ``params`` are the keyword arguments that
    recreate it with :func:`get_embedder`. Documents and queries may be embedded
    differently (models that need prefixes); by default they are not.

    Constructors must be cheap (load model weights lazily, on the first embed call):
    :func:`embedder_from_meta` and index staleness checks construct embedders freely.
    """

    name: str
    model: str
    dimension: int
    normalized: bool
    params: dict[str, Any]

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of the texts, float32, shape ``(len(texts), dimension)``."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries; the same as documents unless a model says otherwise."""
        return self.embed_documents(texts)

    def describe(self) -> dict[str, Any]:
        """What an index records about its embedder (``index.json`` → ``embedding``)."""
        return {"backend": self.name, "model": self.model, "dimension": self.dimension,
                "normalized": self.normalized, "params": dict(self.params)}


EmbedderFactory = Callable[..., Embedder]
_REGISTRY: dict[str, EmbedderFactory] = {}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``get_embedder(name, **params)`` call ``factory(**params)``.

    The built-in backends are registered in one place, :mod:`ragassay.embed`.
    """
    _REGISTRY[name] = factory


def known_embedders() -> list[str]:
    """Registered embedder names, sorted."""
    return sorted(_REGISTRY)


def get_embedder(name: str, **params: Any) -> Embedder:
    """The embedder registered as ``name``, built with ``params``.

    Unknown name → ``ValueError`` suggesting the closest known name and listing them all
    (``unknown embedder 'hashng'; did you mean hashing? (known: ...)``); parameters the
    backend does not take → ``ValueError`` naming the backend.
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ValueError(unknown_name("embedder", name, known_embedders()))
    try:
        return factory(**params)
    except TypeError as exc:  # unexpected keyword arguments
        raise ValueError(f"bad parameters for embedder {name!r}: {exc}") from None


# What identifies an embedder's vectors: two embedders agreeing on all of these make
# comparable vectors (``Embedder.describe`` minus ``normalized``).
IDENTITY = ("backend", "model", "dimension", "params")


def embedder_difference(recorded: Mapping[str, Any], embedder: Embedder,
                        keys: Sequence[str] = IDENTITY) -> str | None:
    """The first of ``keys`` in which ``embedder`` differs from an index's ``embedding``
    record, ``None`` when it agrees on all of them.

    The one embedder-identity check: querying an index (``check_query_embedder``), reopening
    its embedder (:func:`embedder_from_meta`) and the staleness check (``index_status``) all
    use it. Compared through JSON, as the record was written: tuples become lists.
    """
    want = json.loads(json.dumps(embedder.describe()))
    for key in keys:
        if recorded.get(key) != want[key]:
            return key
    return None


def embedder_from_meta(meta: dict[str, Any]) -> Embedder:
    """Recreate the embedder an index was built with, from its ``embedding`` record.

    Refuses (``ValueError``) when the recreated embedder's model or dimension differs from
    the record, since its query vectors would not be comparable with the index.
    """
    try:
        backend, params = meta["backend"], meta.get("params") or {}
    except (KeyError, TypeError):
        raise ValueError("the index's embedding record has no 'backend'") from None
    embedder = get_embedder(backend, **params)
    key = embedder_difference(meta, embedder, [k for k in ("model", "dimension") if k in meta])
    if key is not None:
        raise ValueError(f"embedder {backend!r} with params {params} gives {key} "
                         f"{getattr(embedder, key)!r}, but the index records "
                         f"{meta[key]!r}; rebuild the index with `ragassay index`")
    return embedder
