"""A client for any OpenAI-compatible HTTP endpoint (vLLM, llama.cpp server, Ollama, hosted
APIs): chat completions and embeddings, with timeouts, retries, an on-disk cache and a
bounded-concurrency batch runner.

One concept per module, every name re-exported here:

- :mod:`.client` — :class:`OpenAICompatClient` (retries, timeouts, fail fast; the retry
  policy is described there) and :class:`ChatResult`;
- :mod:`.batch` — :func:`map_bounded` and :func:`deadline_after`;
- :mod:`.cache` — the on-disk reply cache (:func:`cache_key`);
- :mod:`.replies` — reading chat and embedding replies;
- :mod:`.checks` — the pre-run checks (:func:`check_api_key`, :func:`probe_endpoint`,
  :func:`check_endpoint`);
- :mod:`.redact` — :func:`redact_url`, :func:`redact_text`, :func:`url_secrets`;
- :mod:`.config` — :class:`EndpointConfig`; :mod:`.errors` — :class:`EndpointError`,
  :class:`EndpointUnreachable`.

httpx is imported on the first request (or probe) only: commands without HTTP never load it.
"""

from __future__ import annotations

from .batch import deadline_after, map_bounded
from .cache import CACHE_VERSION, cache_key, canonical_json
from .checks import PROBE_TIMEOUT_S, check_api_key, check_endpoint, probe_endpoint
from .client import ChatResult, OpenAICompatClient, backoff_delay, resolve_api_key
from .config import EndpointConfig
from .errors import EndpointError, EndpointUnreachable
from .redact import MASK, redact_text, redact_url, url_secrets

__all__ = [
    "CACHE_VERSION",
    "MASK",
    "PROBE_TIMEOUT_S",
    "ChatResult",
    "EndpointConfig",
    "EndpointError",
    "EndpointUnreachable",
    "OpenAICompatClient",
    "backoff_delay",
    "cache_key",
    "canonical_json",
    "check_api_key",
    "check_endpoint",
    "deadline_after",
    "map_bounded",
    "probe_endpoint",
    "redact_text",
    "redact_url",
    "resolve_api_key",
    "url_secrets",
]
