"""The OpenAI-compatible client: chat and embeddings over the one HTTP client.

:class:`OpenAICompatClient` is a :class:`~ragassay.endpoint.transport.Transport` (timeouts
from the request's start, retries, fail fast, size limits, redaction: see there) for
``{base_url}/chat/completions`` and ``{base_url}/embeddings``. Nothing touches the network
at import or construction time: the first request is made by the first
:meth:`OpenAICompatClient.chat` or :meth:`OpenAICompatClient.embed` call (or the first look
at :attr:`OpenAICompatClient.concurrency`), to the ``base_url`` the user configured and
nowhere else.

Concurrency: ``concurrency`` when the config sets it; else what the server says it works
on at once (llama.cpp's ``/props`` → ``total_slots``, see :mod:`.server`); else 1. More
parallel requests than a server has slots only queue on the server, where their waiting
would count against their timeouts.

The served model: a reply's ``model`` is :attr:`ChatResult.raw_model`; when it differs
from the configured ``model``, the client counts it in :attr:`OpenAICompatClient.answered_by`
(the run records it and says so: the configured name is not what answered).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from .cache import cache_file, cache_key, key_endpoint, read_entry, write_entry
from .config import EndpointConfig
from .replies import parse_chat, parse_embeddings
from .server import fetch_json, model_identity, props_urls, total_slots
from .transport import Transport, backoff_delay, resolve_api_key

__all__ = ["ChatResult", "OpenAICompatClient", "backoff_delay", "resolve_api_key"]


@dataclass(frozen=True)
class ChatResult:
    """One chat completion: the reply text, the token usage the server reported (``None``
    when it reported none), whether it came from the on-disk cache, and the model name the
    server answered with."""

    text: str
    usage: dict[str, int] | None
    cached: bool
    raw_model: str | None


T = TypeVar("T")


@dataclass
class Structured(Generic[T]):
    """A reply read by a caller's parser: ``value`` (``None`` when both replies were
    invalid, ``reason`` then says why), the last reply's text, the attempts made, the
    tokens of all of them, and whether every reply came from the cache."""

    value: T | None
    text: str
    attempts: int
    usage: dict[str, int]
    cached: bool
    reason: str = ""


class OpenAICompatClient(Transport):
    """Chat and embeddings against ``cfg.base_url`` with per-call timeouts, retries (see
    :mod:`.transport`) and, when ``cfg.cache_dir`` is set, an on-disk cache of chat replies.

    ``sleep`` is the function used to wait between retries (tests pass one that records
    the waits); by default the wait ends early when the client stops (fail fast). The API
    key is read from the environment once, here, so that a missing variable fails before
    any work; no request is made until the first call.
    """

    def __init__(self, cfg: EndpointConfig, *,
                 sleep: Callable[[float], None] | None = None) -> None:
        super().__init__(cfg, cfg.base_url, sleep=sleep)
        self.cfg = cfg
        self._info_lock = threading.Lock()  # the server is asked about itself once
        self._concurrency: int | None = cfg.concurrency
        self._server_model: list[dict[str, Any]] | None = None
        self._asked_model = False
        self.answered_by: dict[str, int] = {}  # reply model → replies, when not cfg.model

    # --- what the server says about itself ----------------------------------------------

    @property
    def concurrency(self) -> int:
        """Parallel requests of this client's batches (see the module docstring); the first
        look asks the server's ``/props`` when the config leaves ``concurrency`` unset."""
        with self._info_lock:
            if self._concurrency is None:
                slots = None
                for url in props_urls(self.cfg.base_url):
                    slots = total_slots(fetch_json(self.cfg, url))
                    if slots is not None:
                        break
                self._concurrency = slots or 1
                self.max_connections = self._concurrency
            return self._concurrency

    @property
    def server_model(self) -> list[dict[str, Any]] | None:
        """The served model as ``GET /models`` describes it (:func:`.server.model_identity`),
        asked once; ``None`` when the server does not say."""
        with self._info_lock:
            if not self._asked_model:
                body = fetch_json(self.cfg, self.url_of("/models"))
                self._server_model = model_identity(body, self.cfg.model)
                self._asked_model = True
            return self._server_model

    # --- public calls ------------------------------------------------------------------

    def chat_structured(self, messages: Sequence[dict[str, Any]], parse: Callable[[str], T],
                        **params: Any) -> Structured[T]:
        """:meth:`chat` with a reply that ``parse`` reads (a ``ValueError`` says what is
        wrong with it): an invalid reply is asked for once more, with what was wrong."""
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        cached = True
        reason = ""
        text = ""
        for attempt in (1, 2):
            result = self.chat(messages, **params)
            text = result.text
            for name in usage:
                usage[name] += int((result.usage or {}).get(name) or 0)
            cached = cached and result.cached
            try:
                value = parse(text)
            except ValueError as exc:
                reason = str(exc)
                messages = [*messages, {"role": "assistant", "content": text[:2000]},
                            {"role": "user", "content": f"That reply is invalid: {reason}. "
                             "Reply with the JSON object only."}]
                continue
            return Structured(value, text, attempt, usage, cached)
        return Structured(None, text, 2, usage, cached, reason)

    def chat(self, messages: Sequence[dict[str, Any]], **params: Any) -> ChatResult:
        """One chat completion. ``params`` (``temperature``, ``max_tokens``, ``stop``, …)
        override or extend the config's; all of them are part of the cache key, with the
        endpoint (the redacted ``base_url``) and, when there is a cache, the served model
        as the server describes it (:attr:`server_model`): another server, or another
        model behind the same name, never gets this one's cached replies.

        Raises :class:`EndpointError` when the request fails after its retries.
        """
        payload: dict[str, Any] = {"model": self.cfg.model, "messages": list(messages),
                                   "temperature": self.cfg.temperature,
                                   "max_tokens": self.cfg.max_tokens, **params}
        served = self.server_model if self.cfg.cache_dir is not None else None
        key = cache_key({"kind": "chat", "endpoint": key_endpoint(self.shown_url, served),
                         "served_model": served, **payload})
        hit = self._cache_read(key)
        if hit is not None:
            return ChatResult(text=hit["text"], usage=hit["usage"], cached=True,
                              raw_model=hit["raw_model"])
        text, usage, model = self.post_json("/chat/completions", payload, key, parse_chat)
        if model is not None and model != self.cfg.model:
            with self._info_lock:
                self.answered_by[model] = self.answered_by.get(model, 0) + 1
        self._cache_write(key, {"endpoint": self.shown_url, "served_model": served,
                                "request": payload, "text": text, "usage": usage,
                                "raw_model": model})
        return ChatResult(text=text, usage=usage, cached=False, raw_model=model)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` from ``/embeddings``, float32, shape ``(len(texts), d)``,
        as the server sent them (not normalised). No request for an empty list.

        Raises :class:`EndpointError` when the request fails after its retries.
        """
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        payload = {"model": self.cfg.model, "input": list(texts)}
        key = cache_key({"kind": "embed", "endpoint": self.shown_url, **payload})
        return self.post_json("/embeddings", payload, key,
                              lambda body: parse_embeddings(body, len(texts)))

    # --- cache -------------------------------------------------------------------------

    def cache_path(self, key: str) -> Path | None:
        """The file holding the cached reply for ``key`` (``None`` without a cache)."""
        return cache_file(self.cfg.cache_dir, key)

    def _cache_read(self, key: str) -> dict[str, Any] | None:
        return read_entry(self.cache_path(key))

    def _cache_write(self, key: str, entry: dict[str, Any]) -> None:
        write_entry(self.cache_path(key), entry)
