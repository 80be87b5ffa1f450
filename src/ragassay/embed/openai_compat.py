"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, llama.cpp
server, Ollama, TEI behind an OpenAI shim, hosted APIs).

    vectors = POST {base_url}/embeddings {model, input: [prefix + text, ...]} in batches
    v = v / ||v||          (a zero vector stays zero)

``query_prefix`` / ``passage_prefix`` serve models trained with prefixes (E5:
``"query: "`` / ``"passage: "``). ``params`` record what recreates the embedder (the base
URL, model, batch size, prefixes, the *name* of the key's environment variable) and never
the key. ``model`` names the served model plus any prefix, since prefixes change the
vectors; the base URL is not part of it (the same model elsewhere gives the same vectors).

The dimension is ``dimension`` when given (a reply of another size is an error), else it
is learned from the first reply; until then it reads 0. Give it when an index must be
reopened with :func:`ragassay.embed.embedder_from_meta`, which compares it before any
request is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..endpoint import EndpointConfig, EndpointError, OpenAICompatClient, redact_url
from .base import Embedder


class OpenAICompatEmbedder(Embedder):
    """An :class:`Embedder` over an OpenAI-compatible endpoint (see the module docstring).

    Construction makes no request; each ``embed_*`` call sends ``ceil(n / batch_size)``
    requests with the endpoint client's timeout and retries. Failures raise
    :class:`ragassay.endpoint.EndpointError`.
    """

    name = "openai"
    normalized = True

    def __init__(self, base_url: str, model: str, batch_size: int = 32,
                 dimension: int | None = None, query_prefix: str = "",
                 passage_prefix: str = "", api_key_env: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 3) -> None:
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if dimension is not None and int(dimension) < 1:
            raise ValueError(f"dimension must be at least 1, got {dimension}")
        self._cfg = EndpointConfig(base_url=base_url, model=model, api_key_env=api_key_env,
                                   timeout_s=timeout_s, max_retries=max_retries,
                                   concurrency=1)
        self.batch_size = int(batch_size)
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self._given_dimension = None if dimension is None else int(dimension)
        self._learned_dimension: int | None = None
        self._client: OpenAICompatClient | None = None
        prefixes = (f"|query_prefix={query_prefix!r}|passage_prefix={passage_prefix!r}"
                    if query_prefix or passage_prefix else "")
        self.model = f"{model}{prefixes}"
        # The params are written into index.json (and so into every run's provenance): a
        # credential inside the URL is never stored; pass keys with api_key_env.
        self.params: dict[str, Any] = {
            "base_url": redact_url(self._cfg.base_url), "model": model,
            "batch_size": self.batch_size,
            "dimension": self._given_dimension, "query_prefix": query_prefix,
            "passage_prefix": passage_prefix, "api_key_env": api_key_env,
            "timeout_s": timeout_s, "max_retries": max_retries,
        }

    @property
    def dimension(self) -> int:  # type: ignore[override]  # known late, read-only
        """The given dimension, else the one learned from the first reply, else 0."""
        return self._given_dimension or self._learned_dimension or 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.passage_prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.query_prefix + t for t in texts])

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._client is None:
            # Created on first use: reads the API key variable, makes no request.
            self._client = OpenAICompatClient(self._cfg)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = self._client.embed(texts[start:start + self.batch_size])
            self._check_dimension(batch.shape[1])
            parts.append(batch)
        vectors = np.concatenate(parts).astype(np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return vectors.astype(np.float32)

    def _check_dimension(self, got: int) -> None:
        want = self._given_dimension or self._learned_dimension
        if want is None:
            self._learned_dimension = got
            self.params["dimension"] = got  # recorded, so the index can recreate this embedder
        elif got != want:
            raise EndpointError(f"embedding model {self._cfg.model!r} at {self._cfg.base_url} "
                                f"returned {got}-dimensional vectors, expected {want}")
