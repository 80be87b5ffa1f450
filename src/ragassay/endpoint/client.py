"""The OpenAI-compatible client: chat and embeddings with timeouts, retries and fail fast.

Nothing here touches the network at import or construction time: the first request is
made by the first :meth:`OpenAICompatClient.chat` or :meth:`OpenAICompatClient.embed`
call (or the first look at :attr:`OpenAICompatClient.concurrency`), to the ``base_url``
the user configured and nowhere else.

Timeouts: ``timeout_s`` limits each attempt from the moment its request is sent —
connecting, sending, and waiting for the reply. Waiting for one of the client's own
connections (more threads than ``concurrency``) is not counted: that wait is bounded by
the running requests' timeouts, and a request must not time out before it was sent.

Concurrency: ``concurrency`` when the config sets it; else what the server says it works
on at once (llama.cpp's ``/props`` → ``total_slots``, see :mod:`.server`); else 1. More
parallel requests than a server has slots only queue on the server, where their waiting
would count against their timeouts.

Retry policy (per request):

- retried: HTTP 429 and 5xx, timeouts, connection errors — up to ``max_retries`` times;
- retried once: a malformed reply (not JSON, or missing ``choices[0].message.content``);
- never retried: any other 4xx (the request itself is wrong; repeating it cannot help).

Fail fast: when ``fail_fast_after`` attempts in a row (across all threads of one client)
cannot open a connection (refused, connect timeout, name not resolved) — the endpoint went
away after the start-up probe — the client stops: the failing calls and every later call
of that client raise :class:`EndpointUnreachable` at once, without a request (a cached
reply is still served), and calls waiting to retry wake up and give up. Any HTTP reply
resets the count. ``fail_fast_after: null`` turns this off.

The wait before retry ``i`` (0-based) is ``Retry-After`` when the server sends one (capped
at ``retry_after_cap_s``), else ``backoff_base_s * 2**i * (1 + j)`` with a jitter
``j`` in ``[0, 0.25)`` taken from a sha256 of ``(seed, request key, i)`` — deterministic,
and independent of thread scheduling.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .. import __version__
from .cache import cache_file, cache_key, read_entry, write_entry
from .config import EndpointConfig
from .errors import EndpointError, EndpointUnreachable
from .redact import MASK, redact_text, redact_url, url_secrets
from .replies import Malformed, json_body, parse_chat, parse_embeddings, snippet
from .server import fetch_json, model_identity, props_urls, total_slots

if TYPE_CHECKING:
    import httpx

_JITTER = 0.25

T = TypeVar("T")


@dataclass(frozen=True)
class ChatResult:
    """One chat completion: the reply text, the token usage the server reported (``None``
    when it reported none), whether it came from the on-disk cache, and the model name the
    server answered with."""

    text: str
    usage: dict[str, int] | None
    cached: bool
    raw_model: str | None


def resolve_api_key(api_key_env: str | None) -> str | None:
    """The API key from the environment variable named ``api_key_env`` (``None`` when no
    variable is named). A named but unset or empty variable is an :class:`EndpointError`."""
    if api_key_env is None:
        return None
    key = os.environ.get(api_key_env, "")
    if not key:
        raise EndpointError(f"api_key_env names the environment variable {api_key_env!r}, "
                            f"but it is not set; export {api_key_env}=<key> or remove "
                            "api_key_env from the endpoint config")
    return key


def _retry_after_s(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(base_s: float, attempt: int, seed: int, key: str) -> float:
    """``base_s * 2**attempt * (1 + j)``, with ``j`` in ``[0, 0.25)`` from
    sha256(seed, key, attempt): the same request waits the same on every run."""
    digest = hashlib.sha256(f"{seed}:{key}:{attempt}".encode()).digest()
    jitter = int.from_bytes(digest[:8], "big") / 2**64 * _JITTER
    return base_s * (2**attempt) * (1.0 + jitter)


class OpenAICompatClient:
    """Chat and embeddings against ``cfg.base_url`` with per-call timeouts, retries (see the
    module docstring) and, when ``cfg.cache_dir`` is set, an on-disk cache of chat replies.

    ``sleep`` is the function used to wait between retries (tests pass one that records
    the waits); by default the wait ends early when the client stops (fail fast). The API
    key is read from the environment once, here, so that a missing variable fails before
    any work; no request is made until the first call.
    """

    def __init__(self, cfg: EndpointConfig, *,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.cfg = cfg
        self._api_key = resolve_api_key(cfg.api_key_env)
        self.shown_url = redact_url(cfg.base_url)  # the base URL as messages show it
        self._secrets = [v for v in (*url_secrets(cfg.base_url), self._api_key or "")
                         if len(v) >= 4]  # shorter ones are masked inside URLs only
        self._sleep = sleep
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()
        self._connect_failures = 0  # connection failures in a row, across threads
        self._stopped = threading.Event()  # set when the client gave up on the endpoint
        self._stop_reason = ""
        self._info_lock = threading.Lock()  # the server is asked about itself once
        self._concurrency: int | None = cfg.concurrency
        self._server_model: list[dict[str, Any]] | None = None
        self._asked_model = False

    @property
    def unreachable(self) -> str | None:
        """Why the client stopped calling (see the module docstring), else ``None``."""
        return self._stop_reason if self._stopped.is_set() else None

    def _wait(self, seconds: float) -> None:
        """Wait before a retry; with the default sleep, woken early when the client stops."""
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopped.wait(seconds)

    def _check_stopped(self) -> None:
        if self._stopped.is_set():
            raise EndpointUnreachable(self._stop_reason + "; this call was not made")

    def _connection_failed(self, what: str) -> None:
        """Count one failed connection attempt; stop the client at ``fail_fast_after``."""
        limit = self.cfg.fail_fast_after
        with self._lock:
            self._connect_failures += 1
            if limit is not None and self._connect_failures >= limit \
                    and not self._stopped.is_set():
                self._stop_reason = (f"endpoint unreachable: {what} at {self.shown_url}; "
                                     f"stopped after {self._connect_failures} failed "
                                     "connection attempts in a row")
                self._stopped.set()

    def _connection_ok(self) -> None:
        with self._lock:
            self._connect_failures = 0

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
            return self._concurrency

    @property
    def server_model(self) -> list[dict[str, Any]] | None:
        """The served model as ``GET /models`` describes it (:func:`.server.model_identity`),
        asked once; ``None`` when the server does not say."""
        with self._info_lock:
            if not self._asked_model:
                body = fetch_json(self.cfg, self.cfg.base_url + "/models")
                self._server_model = model_identity(body, self.cfg.model)
                self._asked_model = True
            return self._server_model

    # --- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> OpenAICompatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool (the client can still be used: it reopens lazily)."""
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                import httpx  # imported on first request: commands without HTTP never load it

                headers = {"User-Agent": f"ragassay/{__version__}"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                # The batches bound the parallel requests; unknown yet (None): no limit here.
                limits = httpx.Limits(max_connections=self._concurrency,
                                      max_keepalive_connections=self._concurrency)
                # trust_env=False: no proxy or netrc from the environment redirects our calls.
                self._http = httpx.Client(headers=headers, limits=limits, trust_env=False)
            return self._http

    # --- public calls ------------------------------------------------------------------

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
        key = cache_key({"kind": "chat", "endpoint": self.shown_url, "served_model": served,
                         **payload})
        hit = self._cache_read(key)
        if hit is not None:
            return ChatResult(text=hit["text"], usage=hit["usage"], cached=True,
                              raw_model=hit["raw_model"])
        text, usage, model = self._post("/chat/completions", payload, key, parse_chat)
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
        return self._post("/embeddings", payload, key,
                          lambda body: parse_embeddings(body, len(texts)))

    # --- transport with retries --------------------------------------------------------

    def _post(self, path: str, payload: dict[str, Any], key: str,
              parse: Callable[[Any], T]) -> T:
        import httpx

        url = self.cfg.base_url + path
        shown = self.shown_url + path
        retries = 0
        malformed_retried = False
        attempts = 0
        while True:
            self._check_stopped()
            attempts += 1
            status: int | None = None
            retry_after: float | None = None
            try:
                resp = self._client().post(url, json=payload, timeout=self._timeout())
            except httpx.ConnectTimeout:
                reason = f"no connection to {shown} within {self.cfg.timeout_s:g} s"
                self._connection_failed("no connection within the timeout")
            except httpx.TimeoutException:
                reason = f"no reply from {shown} within {self.cfg.timeout_s:g} s"
            except httpx.TransportError as exc:
                reason = f"cannot reach {shown}: {type(exc).__name__}: {self._scrub(str(exc))}"
                if isinstance(exc, httpx.ConnectError):
                    self._connection_failed("connection refused" if "refused" in str(exc)
                                            .casefold() else "cannot connect")
            else:
                self._connection_ok()
                status = resp.status_code
                if status == 200:
                    try:
                        return parse(json_body(resp))
                    except Malformed as exc:
                        reason = f"malformed reply from {shown}: {self._scrub(str(exc))}"
                        # Once only: a server that keeps sending garbage will not stop.
                        if malformed_retried or self.cfg.max_retries == 0:
                            raise EndpointError(reason, status=status,
                                                attempts=attempts) from None
                        malformed_retried = True
                        self._wait(backoff_delay(self.cfg.backoff_base_s, retries,
                                                  self.cfg.seed, key))
                        retries += 1
                        continue
                reason = f"HTTP {status} from {shown}: {self._scrub(snippet(resp.text))}"
                if status != 429 and status < 500:
                    raise EndpointError(reason + " (not retried: the request itself was "
                                        "refused)", status=status, attempts=attempts)
                retry_after = _retry_after_s(resp.headers.get("Retry-After"))
            if self._stopped.is_set():
                raise EndpointUnreachable(
                    f"{self._stop_reason} (this call: {reason}; gave up after {attempts} "
                    f"attempt{'s' if attempts != 1 else ''})", status=status, attempts=attempts)
            if retries >= self.cfg.max_retries:
                raise EndpointError(f"{reason} (gave up after {attempts} attempt"
                                    f"{'s' if attempts != 1 else ''})", status=status,
                                    attempts=attempts)
            if retry_after is not None:
                delay = min(retry_after, self.cfg.retry_after_cap_s)
            else:
                delay = backoff_delay(self.cfg.backoff_base_s, retries, self.cfg.seed, key)
            self._wait(delay)
            retries += 1

    def _timeout(self) -> httpx.Timeout:
        import httpx

        # pool=None: waiting for a free connection of our own pool is not the request's time.
        return httpx.Timeout(self.cfg.timeout_s, pool=None)

    def _scrub(self, text: str) -> str:
        """``text`` (a server's error body, an exception's message) without the key or the
        URL's secrets, wherever they appear in it."""
        text = redact_text(text)
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    # --- cache -------------------------------------------------------------------------

    def cache_path(self, key: str) -> Path | None:
        """The file holding the cached reply for ``key`` (``None`` without a cache)."""
        return cache_file(self.cfg.cache_dir, key)

    def _cache_read(self, key: str) -> dict[str, Any] | None:
        return read_entry(self.cache_path(key))

    def _cache_write(self, key: str, entry: dict[str, Any]) -> None:
        write_entry(self.cache_path(key), entry)
