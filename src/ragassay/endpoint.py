"""A client for any OpenAI-compatible HTTP endpoint (vLLM, llama.cpp server, Ollama, hosted
APIs): chat completions and embeddings, with timeouts, retries, an on-disk cache and a
bounded-concurrency batch runner.

Nothing here touches the network at import or construction time: the first request is
made by the first :meth:`OpenAICompatClient.chat` or :meth:`OpenAICompatClient.embed`
call, to the ``base_url`` the user configured and nowhere else.

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

Secrets never reach an output: :func:`redact_url` masks the password of a URL's userinfo
(``http://user:***@host``) and the values of key-like query parameters; every
:class:`EndpointError` message and every dump of an :class:`EndpointConfig` goes through it.

Before a run, :func:`check_endpoint` refuses a named but unset key variable and an address
where nothing answers (:class:`ragassay.errors.InputError`), so that neither is discovered
question by question after the retrieval work.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from . import __version__
from .atomic import write_text
from .errors import InputError

if TYPE_CHECKING:
    import httpx

CACHE_VERSION = 1
_JITTER = 0.25

PROBE_TIMEOUT_S = 5.0
MASK = "***"

T = TypeVar("T")
R = TypeVar("R")

# Query (or fragment) parameters whose value is a credential: api_key, key, token, sig, …
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.I)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")


def _mask_params(text: str) -> str:
    pieces = []
    for piece in text.split("&"):
        name, eq, value = piece.partition("=")
        if eq and value and _SECRET_PARAM.search(unquote_plus(name)):
            piece = f"{name}={MASK}"
        pieces.append(piece)
    return "&".join(pieces)


def redact_url(url: str) -> str:
    """``url`` safe to show: the password of its userinfo masked (``http://user:***@host``;
    a user name alone, which is then usually the key, masked whole: ``http://***@host``),
    and the values of key-like query and fragment parameters (``api_key``, ``key``,
    ``token``, ``sig``, ``secret``, …) masked. A URL without secrets comes back unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced IPv6 bracket: mask any userinfo by pattern
        return re.sub(r"(://)[^/@\s]*@", rf"\1{MASK}@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}"
    return urlunsplit((parts.scheme, netloc, parts.path, _mask_params(parts.query),
                       _mask_params(parts.fragment)))


def redact_text(text: str) -> str:
    """``text`` with every URL in it passed through :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (userinfo password, or a lone user name; key-like
    parameter values), raw and percent-decoded, longest first: what :func:`redact_url`
    masks, for scrubbing text where they may appear outside the URL."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: set[str] = set()
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        found.add(password if colon else user)
    for text in (parts.query, parts.fragment):
        for piece in text.split("&"):
            name, eq, value = piece.partition("=")
            if eq and value and _SECRET_PARAM.search(unquote_plus(name)):
                found.add(value)
    out = {v for s in found for v in (s, unquote(s), unquote_plus(s)) if v}
    return sorted(out, key=len, reverse=True)


class EndpointError(Exception):
    """A request to the endpoint failed for good (after its retries), or was never made
    (run timeout). ``status`` is the last HTTP status when there was one; ``attempts`` how
    many requests were sent. URLs in the message are redacted (:func:`redact_text`): the
    message ends up in run folders."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        message = redact_text(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.attempts = attempts


class EndpointUnreachable(EndpointError):
    """The client stopped calling: ``fail_fast_after`` connection attempts in a row failed
    (see the module docstring). Every call after that raises it without a request."""


class EndpointConfig(BaseModel):
    """Where the endpoint is and how to call it. The API key is never stored here: only the
    *name* of the environment variable holding it (``api_key_env``).

    ``fail_fast_after``: stop calling after this many connection failures in a row
    (default 3; ``null``: never stop, retry every call).

    ``prompt_price_per_mtok`` / ``completion_price_per_mtok``: optional prices per million
    prompt / completion tokens, in whatever currency you use (ragassay never converts or
    names one). Both or neither: with them, each answer's ``usage.cost`` and the run's
    ``cost.total`` are computed; without them both are ``null`` (unknown, never 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1, description="e.g. http://127.0.0.1:8080/v1")
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=4, ge=1)
    run_timeout_s: float | None = Field(default=None, gt=0)
    cache_dir: Path | None = None
    backoff_base_s: float = Field(default=0.5, ge=0)
    retry_after_cap_s: float = Field(default=30.0, ge=0)
    seed: int = 0
    fail_fast_after: int | None = Field(default=3, ge=1)
    prompt_price_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    completion_price_per_mtok: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _both_prices(self) -> EndpointConfig:
        if (self.prompt_price_per_mtok is None) != (self.completion_price_per_mtok is None):
            given, other = (("prompt_price_per_mtok", "completion_price_per_mtok")
                            if self.completion_price_per_mtok is None
                            else ("completion_price_per_mtok", "prompt_price_per_mtok"))
            raise ValueError(f"{given} is set but {other} is not: give both prices (0 for "
                             "tokens that are free) or neither")
        return self

    def price_of(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The price of a call with these token counts; ``None`` without prices."""
        if self.prompt_price_per_mtok is None or self.completion_price_per_mtok is None:
            return None
        return (prompt_tokens * self.prompt_price_per_mtok
                + completion_tokens * self.completion_price_per_mtok) / 1_000_000

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value.rstrip("/")

    @field_serializer("base_url")
    def _redacted_url(self, value: str) -> str:
        # Dumps end up in run folders and reports: never with a key in them.
        return redact_url(value)


@dataclass(frozen=True)
class ChatResult:
    """One chat completion: the reply text, the token usage the server reported (``None``
    when it reported none), whether it came from the on-disk cache, and the model name the
    server answered with."""

    text: str
    usage: dict[str, int] | None
    cached: bool
    raw_model: str | None


class _Malformed(Exception):
    """The server answered 200 with a body we cannot use."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept: the same value always gives the same text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def cache_key(payload: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a request payload (model, messages, temperature,
    max_tokens and any other parameter). The base URL is not part of it: the same model
    served at another address gives the same key."""
    return hashlib.sha256(canonical_json({"v": CACHE_VERSION, **payload}).encode()).hexdigest()


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


def check_api_key(cfg: EndpointConfig, *, what: str, path: str | Path = "config") -> None:
    """Refuse a named key variable that is unset or empty, before any work:
    :class:`InputError` on field ``{what}.api_key_env`` (``what`` is the config section,
    ``answerer`` or ``judge``; ``path`` the config file)."""
    name = cfg.api_key_env
    if name is None:
        return
    value = os.environ.get(name)
    if not value:
        state = "is not set" if value is None else "is empty"
        raise InputError(path, f"environment variable {name} {state}; export {name}=<key>, "
                         f"or remove {what}.api_key_env for a server without a key",
                         field=f"{what}.api_key_env")


def probe_endpoint(cfg: EndpointConfig, *, what: str, path: str | Path = "config",
                   timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """One ``GET {base_url}/models`` with a short timeout (the smaller of ``timeout_s`` and
    the config's): any HTTP reply, whatever its status (404, 401, 500 …), means something
    answers — llama.cpp server, vLLM, Ollama and hosted APIs all serve the route, others
    answer 404. A connection that is refused, does not open within the timeout, or
    breaks before a reply (no HTTP there) is :class:`InputError` on ``{what}.base_url``
    naming the redacted URL. A slow reply (read timeout) is not an error: something is
    listening, and the run's own timeouts and retries deal with slowness."""
    import httpx

    url = cfg.base_url + "/models"
    shown = redact_url(cfg.base_url)
    headers = {"User-Agent": f"ragassay/{__version__}"}
    key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    limit = min(timeout_s, cfg.timeout_s)
    try:
        with httpx.Client(headers=headers, trust_env=False, timeout=limit) as http:
            http.get(url)
    except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout):
        return
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            why = f"no connection within {limit:g} s"
        else:
            detail = redact_text(str(exc))
            for secret in url_secrets(cfg.base_url):
                if len(secret) >= 4:
                    detail = detail.replace(secret, MASK)
            why = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        raise InputError(path, f"nothing answers at {shown}: start the server or fix "
                         f"base_url ({why})", field=f"{what}.base_url") from None


def check_endpoint(cfg: EndpointConfig, *, what: str, path: str | Path = "config",
                   probe: bool = True) -> None:
    """Everything that can be known about an endpoint before a run: the key variable
    (:func:`check_api_key`), then, with ``probe``, that something answers at ``base_url``
    (:func:`probe_endpoint`). Raises :class:`InputError` (exit 2) naming the field."""
    check_api_key(cfg, what=what, path=path)
    if probe:
        probe_endpoint(cfg, what=what, path=path)


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


def _parse_chat(body: Any) -> tuple[str, dict[str, int] | None, str | None]:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _Malformed("the reply has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise _Malformed("choices[0].message.content is not a string")
    usage = body.get("usage")
    tokens: dict[str, int] | None = None
    if isinstance(usage, dict) and all(
        isinstance(usage.get(k), int) for k in ("prompt_tokens", "completion_tokens")
    ):
        tokens = {"prompt_tokens": usage["prompt_tokens"],
                  "completion_tokens": usage["completion_tokens"]}
    model = body.get("model")
    return content, tokens, model if isinstance(model, str) else None


def _parse_embeddings(body: Any, n: int) -> np.ndarray:
    try:
        data = body["data"]
        # Servers may answer out of order; "index" says which input a vector belongs to.
        rows = sorted(data, key=lambda d: d.get("index", 0)) if all(
            isinstance(d, dict) and "index" in d for d in data) else list(data)
        vectors = [row["embedding"] for row in rows]
    except (KeyError, TypeError, AttributeError):
        raise _Malformed("the reply has no data[i].embedding") from None
    if len(vectors) != n:
        raise _Malformed(f"asked for {n} embeddings, got {len(vectors)}")
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (ValueError, TypeError):
        raise _Malformed("embeddings are not equal-length lists of numbers") from None
    if arr.ndim != 2:
        raise _Malformed("embeddings are not equal-length lists of numbers")
    return arr


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
                limits = httpx.Limits(max_connections=self.cfg.concurrency,
                                      max_keepalive_connections=self.cfg.concurrency)
                # trust_env=False: no proxy or netrc from the environment redirects our calls.
                self._http = httpx.Client(headers=headers, limits=limits, trust_env=False)
            return self._http

    # --- public calls ------------------------------------------------------------------

    def chat(self, messages: Sequence[dict[str, Any]], **params: Any) -> ChatResult:
        """One chat completion. ``params`` (``temperature``, ``max_tokens``, ``stop``, …)
        override or extend the config's; all of them are part of the cache key.

        Raises :class:`EndpointError` when the request fails after its retries.
        """
        payload: dict[str, Any] = {"model": self.cfg.model, "messages": list(messages),
                                   "temperature": self.cfg.temperature,
                                   "max_tokens": self.cfg.max_tokens, **params}
        key = cache_key({"kind": "chat", **payload})
        hit = self._cache_read(key)
        if hit is not None:
            return ChatResult(text=hit["text"], usage=hit["usage"], cached=True,
                              raw_model=hit["raw_model"])
        text, usage, model = self._post("/chat/completions", payload, key, _parse_chat)
        self._cache_write(key, {"request": payload, "text": text, "usage": usage,
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
        key = cache_key({"kind": "embed", **payload})
        return self._post("/embeddings", payload, key,
                          lambda body: _parse_embeddings(body, len(texts)))

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
                resp = self._client().post(url, json=payload, timeout=self.cfg.timeout_s)
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
                        return parse(_json_body(resp))
                    except _Malformed as exc:
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
                reason = f"HTTP {status} from {shown}: {self._scrub(_snippet(resp.text))}"
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
        return None if self.cfg.cache_dir is None else self.cfg.cache_dir / f"{key}.json"

    def _cache_read(self, key: str) -> dict[str, Any] | None:
        path = self.cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # unreadable entry: ask again and overwrite it
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            return None
        return entry

    def _cache_write(self, key: str, entry: dict[str, Any]) -> None:
        path = self.cache_path(key)
        if path is None:
            return
        # Temp file + rename: an interrupted run leaves complete entries or none.
        write_text(path, canonical_json(entry))


def _json_body(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        raise _Malformed(f"not JSON: {_snippet(resp.text)}") from None


def _snippet(text: str, limit: int = 200) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit] + "…"


# --- batches ---------------------------------------------------------------------------


def deadline_after(seconds: float | None, clock: Callable[[], float] = time.monotonic,
                   ) -> float | None:
    """The absolute deadline (on ``clock``) ``seconds`` from now; ``None`` for no limit."""
    return None if seconds is None else clock() + seconds


def map_bounded(fn: Callable[[T], R], items: Sequence[T], concurrency: int,
                deadline: float | None = None, *,
                clock: Callable[[], float] = time.monotonic) -> list[R | EndpointError]:
    """``[fn(item) for item in items]`` on at most ``concurrency`` threads, in input order.

    A failing item becomes an :class:`EndpointError` value in its slot (any other exception
    is wrapped in one, with the original as ``__cause__``); the batch itself never raises
    for one item. Items are started in input order; once ``clock() >= deadline`` no new
    item is started and each remaining one becomes ``EndpointError("run timeout …")``.
    Items already running finish (each call has its own timeout).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    results: list[R | EndpointError | None] = [None] * len(items)
    next_index = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal next_index
        while True:
            with lock:
                i = next_index
                if i >= len(items):
                    return
                next_index += 1
                expired = deadline is not None and clock() >= deadline
            if expired:
                results[i] = EndpointError("run timeout: the run's deadline passed before "
                                           "this item was started")
                continue
            try:
                results[i] = fn(items[i])
            except EndpointError as exc:
                results[i] = exc
            except Exception as exc:  # one item's bug must not lose the other results
                err = EndpointError(f"{type(exc).__name__}: {exc}")
                err.__cause__ = exc
                results[i] = err

    n_threads = min(concurrency, len(items))
    if n_threads <= 1:
        worker()  # no thread for a sequential run: simpler tracebacks, same results
    else:
        threads = [threading.Thread(target=worker, name=f"ragassay-endpoint-{k}", daemon=True)
                   for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return results  # type: ignore[return-value]  # every slot was filled
