"""The one HTTP client: OpenAI-compatible endpoints (vLLM, llama.cpp server, Ollama, hosted
APIs: chat completions and embeddings) and systems under test (:mod:`ragassay.system`),
with timeouts from the request's start, retries, fail fast, size limits, redaction, an
on-disk cache and a bounded-concurrency batch runner.

One concept per module, every name re-exported here:

- :mod:`.transport` — :class:`Transport`, POST JSON to one configured URL (the retry
  policy, timeouts, limits and credentials are described there);
- :mod:`.deadline` — the total deadline per request (an httpx transport);
- :mod:`.client` — :class:`OpenAICompatClient` (chat, embeddings, what the server says
  about itself) and :class:`ChatResult`;
- :mod:`.batch` — :func:`map_bounded` and :func:`deadline_after`;
- :mod:`.cache` — the on-disk reply cache (:func:`cache_key`);
- :mod:`.replies` — reading chat and embedding replies;
- :mod:`.checks` — the pre-run checks (:func:`check_api_key`, :func:`probe_endpoint`,
  :func:`check_endpoint`);
- :mod:`.redact` — :func:`redact_url`, :func:`redact_text`, :func:`url_secrets`;
- :mod:`.config` — :class:`EndpointConfig`; :mod:`.errors` — :class:`EndpointError`,
  :class:`EndpointUnreachable`; :class:`CallConfig`, the call keys both share.

httpx is imported on the first request (or probe) only: commands without HTTP never load it.
"""

from __future__ import annotations

from .batch import deadline_after, map_bounded
from .cache import CACHE_VERSION, cache_key, canonical_json
from .checks import PROBE_TIMEOUT_S, check_api_key, check_endpoint, probe_endpoint
from .client import ChatResult, OpenAICompatClient
from .config import MAX_REPLY_BYTES, CallConfig, EndpointConfig
from .errors import EndpointError, EndpointUnreachable
from .redact import MASK, redact_text, redact_url, url_secrets
from .replies import Malformed
from .transport import Transport, backoff_delay, plain_url, resolve_api_key

__all__ = [
    "CACHE_VERSION",
    "MAX_REPLY_BYTES",
    "CallConfig",
    "Malformed",
    "Transport",
    "plain_url",
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
