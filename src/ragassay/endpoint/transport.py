"""The one HTTP client: POST JSON with timeouts, retries, fail fast, size limits, redaction.

:class:`Transport` calls one configured URL and nothing else: an OpenAI-compatible endpoint
(:class:`~ragassay.endpoint.OpenAICompatClient` builds on it) or a system under test
(:mod:`ragassay.system`). Nothing touches the network at construction time; httpx is
imported on the first request.

Timeouts: ``timeout_s`` limits each attempt from the moment its request starts (the first
connect or write) to the last byte of the reply — a total, not httpx's per-read limit, so
a server trickling a byte a second is cut at ``timeout_s`` (:mod:`.deadline`). Waiting for
one of the client's own pooled connections is not counted: that wait is bounded by the
running requests' timeouts, and a request must not time out before it was sent.

Size: a reply longer than ``max_reply_bytes`` (its ``Content-Length``, else the bytes
counted as they arrive, decompressed) is refused at once with an error, never parsed.

Retry policy (per request):

- retried: HTTP 429 and 5xx, timeouts, connection errors — up to ``max_retries`` times;
- retried once: a malformed reply (not JSON, or not the shape the caller reads);
- never retried: any other 4xx (the request itself is wrong; repeating it cannot help),
  and a reply over the size limit.

Fail fast: when ``fail_fast_after`` attempts in a row (across all threads of one client)
cannot open a connection (refused, connect timeout, name not resolved) or get no reply
within the timeout — the server went away, or hangs — the client stops: the failing calls
and every later call raise :class:`EndpointUnreachable` at once, without a request (a cached
reply is still served), and calls waiting to retry wake up and give up. Any HTTP reply
resets the count. ``fail_fast_after: null`` turns this off.

The wait before retry ``i`` (0-based) is ``Retry-After`` when the server sends one (capped
at ``retry_after_cap_s``), else ``backoff_base_s * 2**i * (1 + j)`` with a jitter ``j`` in
``[0, 0.25)`` from a sha256 of ``(seed, request key, i)`` — deterministic, and independent
of thread scheduling.

Credentials: the API key comes from the environment variable ``api_key_env`` names and is
sent as ``Authorization: Bearer``; userinfo in the URL (``http://user:pass@host``) is taken
out of the URL and sent as Basic credentials only when no key is named. Every error text
is scrubbed of the key, the URL's secrets and any written-out credential
(:func:`~ragassay.endpoint.redact_text`), whatever the server echoes back.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from .. import __version__
from .config import CallConfig
from .errors import EndpointError, EndpointUnreachable
from .redact import MASK, redact_text, redact_url, url_secrets
from .replies import Malformed, snippet

if TYPE_CHECKING:
    import httpx

_JITTER = 0.25
T = TypeVar("T")


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


def retry_after_s(value: str | None) -> float | None:
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


def split_url(url: str) -> tuple[str, str, tuple[str, str] | None]:
    """``(url without userinfo and query, query, (user, password) or None)``: the parts a
    request URL is built from (the path is appended before the query)."""
    parts = urlsplit(url)
    netloc, userinfo = parts.netloc, None
    if "@" in netloc:
        raw, _, netloc = netloc.rpartition("@")
        user, _, password = raw.partition(":")
        userinfo = (unquote(user), unquote(password))
    base = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
    return base, parts.query, userinfo


def request_headers(api_key: str | None, url: str) -> dict[str, str]:
    """The headers of every request to ``url``: ours, and ``Authorization``: ``Bearer`` with
    the key, else ``Basic`` with the URL's userinfo, else none."""
    headers = {"User-Agent": f"ragassay/{__version__}"}
    userinfo = split_url(url)[2]
    if api_key:  # the key wins over userinfo in the URL
        headers["Authorization"] = f"Bearer {api_key}"
    elif userinfo is not None:
        token = base64.b64encode(":".join(userinfo).encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    return headers


def plain_url(url: str, path: str = "") -> str:
    """``url`` without userinfo, with ``path`` appended before its query string."""
    base, query, _ = split_url(url)
    return base + path + (f"?{query}" if query else "")


class _TooLarge(Exception):
    """The reply is longer than ``max_reply_bytes``."""


class Transport:
    """POST JSON to ``url`` (plus a path) with the policy of the module docstring.

    ``sleep`` is the function used to wait between retries (tests pass one that records
    the waits); by default the wait ends early when the client stops (fail fast). The API
    key is read from the environment once, here, so that a missing variable fails before
    any work. ``max_connections``: the pool's size (``None``: no limit; the batches bound
    the parallel requests).
    """

    def __init__(self, cfg: CallConfig, url: str, *,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.call_cfg = cfg
        self._api_key = resolve_api_key(cfg.api_key_env)
        self.shown_url = redact_url(url)  # the URL as messages show it
        self._url = url
        self._headers = request_headers(self._api_key, url)
        self._secrets = [v for v in (*url_secrets(url), self._api_key or "",
                                     *(self._headers.get("Authorization", "").split(" ")[1:]))
                         if len(v) >= 4]  # shorter ones are masked inside URLs only
        self._sleep = sleep
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()
        self._failures = 0  # attempts in a row without a server reply, across threads
        self._stopped = threading.Event()  # set when the client gave up on the server
        self._stop_reason = ""
        self.max_connections: int | None = cfg.concurrency
        self._timeout: Any = None  # httpx.Timeout, made with the client

    def url_of(self, path: str) -> str:
        """The request URL for ``path``: the configured URL's path, then ``path``, then its
        query string (``?api-version=…`` stays a query string)."""
        return plain_url(self._url, path)

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

    def check_stopped(self) -> None:
        """Raise :class:`EndpointUnreachable` when the client has stopped calling."""
        if self._stopped.is_set():
            raise EndpointUnreachable(self._stop_reason + "; this call was not made")

    def _connection_failed(self, what: str) -> None:
        """Count one attempt without a server reply; stop the client at ``fail_fast_after``."""
        limit = self.call_cfg.fail_fast_after
        with self._lock:
            self._failures += 1
            if limit is not None and self._failures >= limit and not self._stopped.is_set():
                self._stop_reason = (f"endpoint unreachable: {what} at {self.shown_url}; "
                                     f"stopped after {self._failures} failed attempts in "
                                     "a row")
                self._stopped.set()

    def _connection_ok(self) -> None:
        with self._lock:
            self._failures = 0

    # --- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> Self:
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

                from .deadline import DeadlineTransport

                # trust_env=False and our own transport: no proxy or netrc from the
                # environment redirects our calls.
                self._http = httpx.Client(
                    headers={**self._headers, "Content-Type": "application/json"},
                    trust_env=False, transport=DeadlineTransport(self.max_connections))
                # pool=None: waiting for a free connection of our own pool is not the
                # request's time; the deadline (deadline_scope) bounds everything else.
                self._timeout = httpx.Timeout(self.call_cfg.timeout_s, pool=None)
            return self._http

    # --- the call ----------------------------------------------------------------------

    def post_json(self, path: str, payload: Any, key: str, parse: Callable[[Any], T]) -> T:
        """POST ``payload`` as JSON to :meth:`url_of` ``(path)`` and ``parse`` the JSON reply
        (``parse`` raises :class:`Malformed` for a body it cannot use), with the retries,
        timeouts and limits of the module docstring. ``key`` identifies the request (the
        retry jitter). Raises :class:`EndpointError` when the request fails for good."""
        import httpx

        from .deadline import deadline_scope

        cfg = self.call_cfg
        url, shown = self.url_of(path), self.shown_url + path
        retries = attempts = 0
        malformed_retried = False
        while True:
            self.check_stopped()
            attempts += 1
            status: int | None = None
            retry_after: float | None = None
            try:
                with deadline_scope(cfg.timeout_s):
                    status, headers, body = self._send(url, payload)
            except _TooLarge:
                raise EndpointError(f"the reply from {shown} is larger than max_reply_bytes "
                                    f"({cfg.max_reply_bytes} bytes): refused unread; raise "
                                    "max_reply_bytes if it is right", attempts=attempts,
                                    ) from None
            except httpx.ConnectTimeout:
                reason = f"no connection to {shown} within {cfg.timeout_s:g} s"
                self._connection_failed(f"no connection within {cfg.timeout_s:g} s")
            except httpx.TimeoutException:
                reason = f"no reply from {shown} within {cfg.timeout_s:g} s"
                self._connection_failed(f"no reply within {cfg.timeout_s:g} s")
            except httpx.TransportError as exc:
                reason = f"cannot reach {shown}: {type(exc).__name__}: {self.scrub(str(exc))}"
                if isinstance(exc, httpx.ConnectError):
                    self._connection_failed("connection refused" if "refused" in str(exc)
                                            .casefold() else "cannot connect")
            else:
                self._connection_ok()
                if status == 200:
                    try:
                        try:
                            value = json.loads(body)
                        except ValueError:
                            raise Malformed(f"not JSON: {snippet(_text(body))}") from None
                        return parse(value)
                    except Malformed as exc:
                        reason = f"malformed reply from {shown}: {self.scrub(str(exc))}"
                        # Once only: a server that keeps sending garbage will not stop.
                        if malformed_retried or cfg.max_retries == 0:
                            raise EndpointError(reason, status=status,
                                                attempts=attempts) from None
                        malformed_retried = True
                        self._wait(backoff_delay(cfg.backoff_base_s, retries, cfg.seed, key))
                        retries += 1
                        continue
                reason = f"HTTP {status} from {shown}: {self.scrub(snippet(_text(body)))}"
                if status != 429 and status < 500:
                    raise EndpointError(reason + " (not retried: the request itself was "
                                        "refused)", status=status, attempts=attempts)
                retry_after = retry_after_s(headers.get("retry-after"))
            if self._stopped.is_set():
                raise EndpointUnreachable(
                    f"{self._stop_reason} (this call: {reason}; gave up after {attempts} "
                    f"attempt{'s' if attempts != 1 else ''})", status=status, attempts=attempts)
            if retries >= cfg.max_retries:
                raise EndpointError(f"{reason} (gave up after {attempts} attempt"
                                    f"{'s' if attempts != 1 else ''})", status=status,
                                    attempts=attempts)
            if retry_after is not None:
                delay = min(retry_after, cfg.retry_after_cap_s)
            else:
                delay = backoff_delay(cfg.backoff_base_s, retries, cfg.seed, key)
            self._wait(delay)
            retries += 1

    def _send(self, url: str, payload: Any) -> tuple[int, Any, bytes]:
        """One request: status, headers (case-insensitive ``get``) and the whole body, read
        within the size limit."""
        limit = self.call_cfg.max_reply_bytes
        content = json.dumps(payload, ensure_ascii=False).encode()
        with self._client().stream("POST", url, content=content,
                                   timeout=self._timeout) as resp:
            length = resp.headers.get("content-length", "")
            if length.isdigit() and int(length) > limit:
                raise _TooLarge
            body = bytearray()
            for piece in resp.iter_bytes():
                body += piece
                if len(body) > limit:
                    raise _TooLarge
            return resp.status_code, resp.headers, bytes(body)

    def scrub(self, text: str) -> str:
        """``text`` (a server's error body, an exception's message) without the key, the
        URL's secrets or any written-out credential, wherever they appear in it."""
        text = redact_text(text)
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text


def _text(body: bytes) -> str:
    return body[:4096].decode("utf-8", errors="replace")
